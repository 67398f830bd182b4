module github.com/longrun/longrun/hostcheck

go 1.26.0
