package result

import "time"

// ImportedFile is the provenance of one imported input file: its content's
// SHA-256, the run it went into, what read it, and when.
type ImportedFile struct {
	SHA256      string    `json:"sha256"`
	RunID       string    `json:"run_id"`
	File        string    `json:"file"`
	Format      string    `json:"format"`
	Tool        string    `json:"tool,omitempty"`
	ToolVersion string    `json:"tool_version,omitempty"`
	SizeBytes   int64     `json:"size_bytes"`
	Results     int       `json:"results"`
	Imported    time.Time `json:"imported"`
}
