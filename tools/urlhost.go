package tools

import "github.com/longrun/longrun/toolspec"

// URLHost is the permission subject of a URL (toolspec.URLHost).
func URLHost(raw string) string { return toolspec.URLHost(raw) }

// normalHost is a host as the address rules match it (toolspec.NormalHost).
func normalHost(h string) string { return toolspec.NormalHost(h) }
