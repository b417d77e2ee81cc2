// nhcb-twin writes a twin of a Prometheus TSDB in which every classic
// histogram is one native histogram with custom buckets (NHCB), as Prometheus
// 3 stores it when a scrape sets convert_classic_histograms_to_nhcb: the
// `<name>_bucket` series (by `le`), `<name>_count` and `<name>_sum` with the
// same other labels become one series named `<name>`, a sample per scrape.
// Every other series is copied unchanged. With -keep-classic the classic
// series are copied too, as always_scrape_classic_histograms keeps them.
//
//	nhcb-twin -src <directory of blocks> -dst <empty directory> [-keep-classic]
//
// It prints one line of counts on stdout. Used by bench/nhcb-tsdb.ts; the
// source blocks are only read.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/storage"
	"github.com/prometheus/prometheus/tsdb"
	"github.com/prometheus/prometheus/tsdb/chunkenc"
	"github.com/prometheus/prometheus/util/convertnhcb"
)

type sample struct {
	t int64
	v float64
}

type series struct {
	lset    labels.Labels
	samples []sample
}

type bucket struct {
	le      float64
	samples []sample
}

// One classic histogram of one target: its buckets, count and sum series.
type classic struct {
	base    labels.Labels
	buckets []bucket
	count   []sample
	sum     []sample
	// The classic series themselves, for -keep-classic.
	parts []series
}

type counts struct {
	sourceSeries, copiedSeries, histograms, histogramSamples, floatHistogramSamples, skippedScrapes int
}

func main() {
	src := flag.String("src", "", "directory holding the source blocks (read only)")
	dst := flag.String("dst", "", "directory the twin's block is written into (must exist and be empty)")
	keepClassic := flag.Bool("keep-classic", false, "also copy the classic bucket, count and sum series")
	flag.Parse()
	if *src == "" || *dst == "" {
		fmt.Fprintln(os.Stderr, "nhcb-twin: -src and -dst are required")
		os.Exit(2)
	}
	c, err := run(*src, *dst, *keepClassic)
	if err != nil {
		fmt.Fprintf(os.Stderr, "nhcb-twin: %v\n", err)
		os.Exit(1)
	}
	fmt.Printf("source series %d, copied %d, histograms %d, integer histogram samples %d, float histogram samples %d, scrapes skipped %d\n",
		c.sourceSeries, c.copiedSeries, c.histograms, c.histogramSamples, c.floatHistogramSamples, c.skippedScrapes)
}

func run(src, dst string, keepClassic bool) (counts, error) {
	var c counts
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	all, err := readAll(logger, src)
	if err != nil {
		return c, err
	}
	c.sourceSeries = len(all)

	// Histograms are found by their buckets: a `_count` or `_sum` without buckets is an ordinary series.
	hists := map[string]*classic{}
	for _, s := range all {
		name := s.lset.Get(labels.MetricName)
		if le := s.lset.Get(labels.BucketLabel); le != "" && strings.HasSuffix(name, "_bucket") {
			bound, err := strconv.ParseFloat(le, 64)
			if err != nil {
				return c, fmt.Errorf("series %s: le %q is not a number: %w", s.lset, le, err)
			}
			base := convertnhcb.GetHistogramMetricBase(s.lset, strings.TrimSuffix(name, "_bucket"))
			h := hists[base.String()]
			if h == nil {
				h = &classic{base: base}
				hists[base.String()] = h
			}
			h.buckets = append(h.buckets, bucket{le: bound, samples: s.samples})
			h.parts = append(h.parts, s)
		}
	}
	var plain []series
	for _, s := range all {
		name := s.lset.Get(labels.MetricName)
		if s.lset.Get(labels.BucketLabel) != "" && strings.HasSuffix(name, "_bucket") {
			continue
		}
		suffix, baseName := convertnhcb.GetHistogramMetricBaseName(name)
		if suffix == convertnhcb.SuffixCount || suffix == convertnhcb.SuffixSum {
			if h := hists[labels.NewBuilder(s.lset).Set(labels.MetricName, baseName).Labels().String()]; h != nil {
				if suffix == convertnhcb.SuffixCount {
					h.count = s.samples
				} else {
					h.sum = s.samples
				}
				h.parts = append(h.parts, s)
				continue
			}
		}
		plain = append(plain, s)
	}

	w, err := tsdb.NewBlockWriter(logger, dst, tsdb.DefaultBlockDuration)
	if err != nil {
		return c, err
	}
	defer w.Close()
	ctx := context.Background()
	app := w.Appender(ctx)
	pending := 0
	commitEvery := func() error {
		pending++
		if pending < 5000 {
			return nil
		}
		pending = 0
		if err := app.Commit(); err != nil {
			return err
		}
		app = w.Appender(ctx)
		return nil
	}
	appendFloats := func(s series) error {
		var ref storage.SeriesRef
		for _, p := range s.samples {
			var err error
			if ref, err = app.Append(ref, s.lset, p.t, p.v); err != nil {
				return fmt.Errorf("series %s at %d: %w", s.lset, p.t, err)
			}
		}
		c.copiedSeries++
		return commitEvery()
	}
	for _, s := range plain {
		if err := appendFloats(s); err != nil {
			return c, err
		}
	}
	keys := make([]string, 0, len(hists))
	for k := range hists {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		h := hists[k]
		if h.count == nil || h.sum == nil {
			return c, fmt.Errorf("histogram %s: no _count or _sum series beside its buckets", h.base)
		}
		if err := appendHistogram(app, h, &c); err != nil {
			return c, err
		}
		c.histograms++
		if keepClassic {
			for _, s := range h.parts {
				if err := appendFloats(s); err != nil {
					return c, err
				}
			}
		}
		if err := commitEvery(); err != nil {
			return c, err
		}
	}
	if err := app.Commit(); err != nil {
		return c, err
	}
	if _, err := w.Flush(ctx); err != nil {
		return c, err
	}
	return c, nil
}

// appendHistogram converts one histogram scrape by scrape, as the scrape's own
// conversion does (convertnhcb); a scrape missing one of its series is skipped.
func appendHistogram(app storage.Appender, h *classic, c *counts) error {
	sort.Slice(h.buckets, func(i, j int) bool { return h.buckets[i].le < h.buckets[j].le })
	at := func(ss []sample, t int64) (float64, bool) {
		i := sort.Search(len(ss), func(i int) bool { return ss[i].t >= t })
		if i < len(ss) && ss[i].t == t {
			return ss[i].v, true
		}
		return 0, false
	}
	var ref storage.SeriesRef
	for _, p := range h.count {
		th := convertnhcb.NewTempHistogram()
		complete := true
		for _, b := range h.buckets {
			v, ok := at(b.samples, p.t)
			if !ok {
				complete = false
				break
			}
			if err := th.SetBucketCount(b.le, v); err != nil {
				return fmt.Errorf("histogram %s at %d: %w", h.base, p.t, err)
			}
		}
		sum, ok := at(h.sum, p.t)
		if !complete || !ok || math.IsNaN(p.v) {
			c.skippedScrapes++
			continue
		}
		if err := th.SetCount(p.v); err != nil {
			return fmt.Errorf("histogram %s at %d: %w", h.base, p.t, err)
		}
		if err := th.SetSum(sum); err != nil {
			return fmt.Errorf("histogram %s at %d: %w", h.base, p.t, err)
		}
		ih, fh, err := th.Convert()
		if err != nil {
			return fmt.Errorf("histogram %s at %d: %w", h.base, p.t, err)
		}
		if ref, err = app.AppendHistogram(ref, h.base, p.t, ih, fh); err != nil {
			return fmt.Errorf("histogram %s at %d: %w", h.base, p.t, err)
		}
		if ih != nil {
			c.histogramSamples++
		} else {
			c.floatHistogramSamples++
		}
	}
	return nil
}

// readAll reads every float series of every block under dir into memory.
func readAll(logger *slog.Logger, dir string) ([]series, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []series
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		if _, err := os.Stat(filepath.Join(dir, e.Name(), "meta.json")); err != nil {
			continue
		}
		b, err := tsdb.OpenBlock(logger, filepath.Join(dir, e.Name()), nil, nil)
		if err != nil {
			return nil, err
		}
		got, err := readBlock(b)
		b.Close()
		if err != nil {
			return nil, err
		}
		out = append(out, got...)
	}
	if len(out) == 0 {
		return nil, errors.New("no series in " + dir)
	}
	return out, nil
}

func readBlock(b *tsdb.Block) ([]series, error) {
	q, err := tsdb.NewBlockQuerier(b, b.MinTime(), b.MaxTime())
	if err != nil {
		return nil, err
	}
	defer q.Close()
	set := q.Select(context.Background(), true, nil, labels.MustNewMatcher(labels.MatchRegexp, labels.MetricName, ".+"))
	var out []series
	var it chunkenc.Iterator
	for set.Next() {
		s := set.At()
		it = s.Iterator(it)
		cur := series{lset: s.Labels()}
		for vt := it.Next(); vt != chunkenc.ValNone; vt = it.Next() {
			if vt != chunkenc.ValFloat {
				return nil, fmt.Errorf("series %s: a %s sample; the source must hold float series only", s.Labels(), vt)
			}
			t, v := it.At()
			cur.samples = append(cur.samples, sample{t, v})
		}
		if it.Err() != nil {
			return nil, it.Err()
		}
		out = append(out, cur)
	}
	return out, set.Err()
}
