package main

import (
	"fmt"
	"math"
	"os"
	"runtime"
	"sort"
	"strings"
	"time"
)

// stat is a figure over several runs: the median with min and max.
type stat struct{ Med, Min, Max float64 }

func summarize(xs []float64) stat {
	if len(xs) == 0 {
		return stat{math.NaN(), math.NaN(), math.NaN()}
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	return stat{Med: quantile(s, 0.5), Min: s[0], Max: s[len(s)-1]}
}

// quantile of sorted s, interpolating between neighbours.
func quantile(s []float64, q float64) float64 {
	if len(s) == 0 {
		return math.NaN()
	}
	pos := q * float64(len(s)-1)
	lo := int(math.Floor(pos))
	hi := int(math.Ceil(pos))
	return s[lo] + (s[hi]-s[lo])*(pos-float64(lo))
}

func durQuantile(ds []time.Duration, q float64) float64 {
	s := make([]float64, len(ds))
	for i, d := range ds {
		s[i] = ms(d)
	}
	sort.Float64s(s)
	return quantile(s, q)
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// cell formats a stat as "median (min–max)".
func (s stat) cell(prec int) string {
	return fmt.Sprintf("%.*f (%.*f–%.*f)", prec, s.Med, prec, s.Min, prec, s.Max)
}

// machine describes where the figures were taken.
func machine() string {
	cpu := "unknown CPU"
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
				cpu = strings.TrimSpace(v)
				break
			}
		}
	}
	return fmt.Sprintf("%d CPUs (%s), %s %s/%s", runtime.NumCPU(), cpu, runtime.Version(), runtime.GOOS, runtime.GOARCH)
}

// loadavg is the 1, 5 and 15 minute load average.
func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

// rssKB reads a process's resident set (VmRSS) or its peak (VmHWM), in KiB.
func rssKB(pid int, field string) int64 {
	p := "/proc/self/status"
	if pid > 0 {
		p = fmt.Sprintf("/proc/%d/status", pid)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, field+":") {
			var kb int64
			fmt.Sscanf(strings.TrimSpace(strings.TrimPrefix(l, field+":")), "%d", &kb)
			return kb
		}
	}
	return 0
}
