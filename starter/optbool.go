package main

import (
	"fmt"
	"strconv"
)

// optionalBool is a boolean flag that stays nil unless it is given, so an
// input field whose absence means its default (SessionInput.LocalReads)
// is sent absent, and the session's default decides. --name alone is true,
// --name=false is false.
type optionalBool struct{ p **bool }

func (o optionalBool) String() string {
	if o.p == nil || *o.p == nil {
		return ""
	}
	return strconv.FormatBool(**o.p)
}

func (o optionalBool) Set(v string) error {
	b, err := strconv.ParseBool(v)
	if err != nil {
		return fmt.Errorf("want true or false, not %q", v)
	}
	*o.p = &b
	return nil
}

// IsBoolFlag lets the flag be given without a value.
func (optionalBool) IsBoolFlag() bool { return true }
