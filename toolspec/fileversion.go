package toolspec

// FileVersion is the content hash of one file as a tool saw or left it.
// Tools report them in Result.Files; the session keeps the latest per path
// in workflow state (so it survives worker restarts and continue-as-new)
// and hands them back to the tools that change files, which refuse to
// overwrite a file the model has not seen as it is now.
type FileVersion struct {
	// Path is relative to the session's working directory, slash-separated.
	Path string `json:"path"`
	// SHA256 is the hex digest of the whole content; empty when the tool
	// deleted the file.
	SHA256 string `json:"sha256,omitempty"`
}
