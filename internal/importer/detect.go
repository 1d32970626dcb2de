package importer

import (
	"bytes"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
)

var (
	reFioTextJob  = regexp.MustCompile(`(?m)^\S.*: \(groupid=\d+, jobs=\d+\): err=`)
	reFioTerse    = regexp.MustCompile(`(?m)^\d;fio-[^;]*;`)
	reCephMulti   = regexp.MustCompile(`(?m)^\s*osd\.\d+\s*:\s*\{`)
	reHdparmLine  = regexp.MustCompile(`Timing (?:O_DIRECT )?(?:buffered disk|cached|disk) reads:`)
	reDDLine      = regexp.MustCompile(`(?m)^\d+ bytes? .*copied, `)
	reIozoneHead  = regexp.MustCompile(`(?m)^\s*(?:kB|KB)\s+reclen\s+write`)
	reSmartTable  = regexp.MustCompile(`(?m)^ID# +ATTRIBUTE_NAME`)
	reSmartBanner = regexp.MustCompile(`(?m)^smartctl \d`)
)

// Detect names the format(s) of an input. Files holding both hdparm and dd
// lines (a shell log of a disk check) give both.
func Detect(name string, data []byte) ([]Format, error) {
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		return nil, &ParseError{File: name, Msg: "the file is empty"}
	}
	head := trimmed
	if len(head) > 64<<10 {
		head = head[:64<<10]
	}
	switch {
	case bytes.Contains(head, []byte(`"fio version"`)):
		return []Format{FioJSON}, nil
	case reCephMulti.Match(head):
		return []Format{CephBench}, nil
	}
	if trimmed[0] == '{' || trimmed[0] == '[' {
		switch {
		case bytes.Contains(head, []byte(`"smartctl"`)) || bytes.Contains(head, []byte(`"ata_smart_attributes"`)) ||
			bytes.Contains(head, []byte(`"nvme_smart_health_information_log"`)) || bytes.Contains(head, []byte(`"scsi_error_counter_log"`)) ||
			bytes.Contains(head, []byte(`"scsi_grown_defect_list"`)) || bytes.Contains(head, []byte(`"info_name"`)):
			return []Format{SmartctlJSON}, nil
		case bytes.Contains(head, []byte(`"bytes_per_sec"`)) && bytes.Contains(head, []byte(`"blocksize"`)):
			return []Format{CephBench}, nil
		}
		return []Format{JSON}, nil
	}
	// Text outputs may share a file (a notes file with fio, dd and hdparm
	// outputs between prose): every format found is read.
	var out []Format
	for _, c := range []struct {
		format Format
		found  bool
	}{
		{FioText, reFioTextJob.Match(data)},
		{FioTerse, reFioTerse.Match(data)},
		{Iozone, reIozoneHead.Match(data) || bytes.Contains(data, []byte("Iozone: Performance Test")) || reIozoneReport.Match(data)},
		{Smartctl, reSmartTable.Match(data) || reSmartBanner.Match(data)},
		{Hdparm, reHdparmLine.Match(data)},
		{DD, reDDLine.Match(data)},
	} {
		if c.found {
			out = append(out, c.format)
		}
	}
	if len(out) > 0 {
		return out, nil
	}
	first := firstLine(head)
	if strings.HasPrefix(strings.ToLower(strings.TrimSpace(first)), "target,") || strings.EqualFold(filepath.Ext(name), ".csv") {
		return []Format{CSV}, nil
	}
	return nil, &ParseError{File: name, Line: 1, Msg: fmt.Sprintf(
		"cannot tell the format: expected fio JSON, text or terse output, iozone -a tables, dd or hdparm output, ceph osd bench, smartctl output, or storbench CSV (header %q) or JSON; force one with --format",
		csvHeader)}
}

func firstLine(b []byte) string {
	for _, l := range lines(b) {
		if strings.TrimSpace(l) != "" {
			return l
		}
	}
	return ""
}
