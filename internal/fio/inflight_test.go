package fio

import "testing"

func TestInFlight(t *testing.T) {
	tests := []struct {
		name        string
		global, job Options
		want        int
	}{
		{"async engine, depth and jobs", nil, Options{"ioengine": "libaio", "iodepth": "8", "numjobs": "4"}, 32},
		{"the job's over the global", Options{"ioengine": "io_uring", "iodepth": "32"}, Options{"iodepth": "4"}, 4},
		{"global only", Options{"ioengine": "rbd", "iodepth": "8", "numjobs": "2"}, nil, 16},
		{"a synchronous engine ignores its depth", nil, Options{"ioengine": "psync", "iodepth": "16", "numjobs": "2"}, 2},
		{"gfapi is synchronous", nil, Options{"ioengine": "gfapi", "iodepth": "8"}, 1},
		{"no engine: fio's default psync", nil, Options{"iodepth": "8"}, 1},
		{"fio's defaults", nil, nil, 1},
		{"not a number", nil, Options{"ioengine": "libaio", "iodepth": "eight"}, 0},
		{"zero", nil, Options{"ioengine": "libaio", "numjobs": "0"}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := InFlight(tt.global, tt.job); got != tt.want {
				t.Errorf("InFlight = %d, want %d", got, tt.want)
			}
		})
	}
}
