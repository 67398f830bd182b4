//go:build !linux

package tools

import "os"

// listingFile opens dir itself for listing its entries.
func listingFile(dir *os.Root) (*os.File, error) { return dir.Open(".") }
