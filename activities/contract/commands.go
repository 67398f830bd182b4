package contract

import "github.com/longrun/longrun/untrusted"

// Defaults the printed commands leave out, as the starter does.
const (
	defaultAddress   = "localhost:7233"
	defaultNamespace = "default"
)

// ConnFlags are the --address and --namespace a longrun command needs to
// reach a session's server, each only when it is not the default. The
// session's details (workflows) and the worker's notifications (notify)
// print the same commands, so the flags are written once, here.
func ConnFlags(address, namespace string) string {
	var f string
	if address != "" && address != defaultAddress {
		f += " --address " + untrusted.ShellWord(address)
	}
	if namespace != "" && namespace != defaultNamespace {
		f += " --namespace " + untrusted.ShellWord(namespace)
	}
	return f
}
