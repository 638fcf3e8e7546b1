// Command dockerfile-lint runs BuildKit's Dockerfile checks, the ones
// `docker build --check` runs, without a container engine. It prints one line
// per finding and exits 1 on any warning, or when the Dockerfile does not parse.
//
// Usage: dockerfile-lint [Dockerfile ...]
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"

	"github.com/moby/buildkit/client/llb"
	"github.com/moby/buildkit/client/llb/sourceresolver"
	"github.com/moby/buildkit/frontend/dockerfile/dockerfile2llb"
	digest "github.com/opencontainers/go-digest"
)

// Finding is one lint warning, or the error that stopped the parse (Rule "error").
type Finding struct {
	File    string
	Line    int // 1-based; 0 when BuildKit gives no location
	Rule    string
	Message string
	URL     string
}

func (f Finding) String() string {
	s := fmt.Sprintf("%s:%d: %s: %s", f.File, f.Line, f.Rule, f.Message)
	if f.URL != "" {
		s += " (" + f.URL + ")"
	}
	return s
}

// Lint runs BuildKit's checks on one Dockerfile. Every stage is checked, as
// `docker build --check` does; a `# check=` directive in the file is honoured.
func Lint(ctx context.Context, file string, dt []byte) ([]Finding, error) {
	smap := llb.NewSourceMap(nil, file, "Dockerfile", dt)
	smap.Definition = &llb.Definition{} // the linter reads it; there is no LLB here
	res, err := dockerfile2llb.DockerfileLint(ctx, dt, dockerfile2llb.ConvertOpt{
		SourceMap:    smap,
		MetaResolver: offlineResolver{},
	})
	if err != nil {
		return nil, err
	}
	var out []Finding
	for _, w := range res.Warnings {
		f := Finding{File: file, Rule: w.RuleName, Message: w.Detail, URL: w.URL}
		if w.Location != nil && len(w.Location.Ranges) > 0 {
			f.Line = int(w.Location.Ranges[0].Start.Line)
		}
		out = append(out, f)
	}
	if e := res.Error; e != nil {
		f := Finding{File: file, Rule: "error", Message: e.Message}
		if len(e.Location.Ranges) > 0 {
			f.Line = int(e.Location.Ranges[0].Start.Line)
		}
		out = append(out, f)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Line < out[j].Line })
	return out, nil
}

// offlineResolver stands in for the registry: BuildKit resolves every base
// image while it walks the stages, and here nothing may be pulled. It answers
// with a one-layer image of the requested platform, so no check that depends
// on the real image config (such as InvalidBaseImagePlatform) can fire.
type offlineResolver struct{}

func (offlineResolver) ResolveImageConfig(_ context.Context, ref string, opt sourceresolver.Opt) (string, digest.Digest, []byte, error) {
	img := map[string]any{
		"rootfs": map[string]any{"type": "layers", "diff_ids": []string{digest.FromString(ref).String()}},
		"config": map[string]any{},
	}
	if opt.ImageOpt != nil && opt.ImageOpt.Platform != nil {
		img["os"] = opt.ImageOpt.Platform.OS
		img["architecture"] = opt.ImageOpt.Platform.Architecture
		img["variant"] = opt.ImageOpt.Platform.Variant
	}
	dt, err := json.Marshal(img)
	return ref, "", dt, err
}

func run(files []string, stdout, stderr io.Writer) int {
	status := 0
	for _, file := range files {
		dt, err := os.ReadFile(file)
		if err != nil {
			fmt.Fprintln(stderr, err)
			status = 1
			continue
		}
		findings, err := Lint(context.Background(), file, dt)
		if err != nil {
			fmt.Fprintf(stderr, "%s: %v\n", file, err)
			status = 1
			continue
		}
		for _, f := range findings {
			fmt.Fprintln(stdout, f)
			status = 1
		}
	}
	return status
}

func main() {
	flag.Usage = func() {
		fmt.Fprintln(flag.CommandLine.Output(), "usage: dockerfile-lint [Dockerfile ...]")
	}
	flag.Parse()
	files := flag.Args()
	if len(files) == 0 {
		files = []string{"Dockerfile"}
	}
	os.Exit(run(files, os.Stdout, os.Stderr))
}
