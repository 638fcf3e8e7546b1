//go:build soak

package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"routeopt.io/routeopt/api/v1alpha1"
	"routeopt.io/routeopt/test/e2e/framework"
)

// soakReport is what make soak prints and writes to test-output/.
type soakReport struct {
	Started      time.Time      `json:"started"`
	CPUs         int            `json:"cpus"`
	LoadPerPhase float64        `json:"load_per_phase_seconds"`
	Phases       []*phaseReport `json:"phases"`

	mu sync.Mutex
}

// phaseReport is what one phase measured.
type phaseReport struct {
	Name              string    `json:"name"`
	Began             time.Time `json:"began"`
	LoadSeconds       float64   `json:"load_seconds"`
	DrainSeconds      float64   `json:"drain_seconds"`
	LoadAverageBefore string    `json:"load_average_before"`
	LoadAverageAfter  string    `json:"load_average_after"`
	// Stalls are the times the test process woke up late: the machine
	// was too busy to run it, and so the service.
	Stalls []stall `json:"stalls"`
	Victim string  `json:"killed_process"`
	// APIKilled says the REST API went down with the killed process.
	APIKilled     bool         `json:"api_killed"`
	Outages       []soakOutage `json:"outages"`
	Requests      []soakKind   `json:"requests"`
	Failures      soakFailure  `json:"failures"`
	Optimizations soakOpts     `json:"optimizations"`
	SolvePods     struct {
		Succeeded int `json:"succeeded"`
		Failed    int `json:"failed"`
		Other     int `json:"other"`
	} `json:"solve_pods"`
	Events soakEvents   `json:"events"`
	Memory []soakMemory `json:"memory"`
	// Exited are the processes that ended on their own.
	Exited []string      `json:"exited_on_their_own"`
	Solves soakSolveRuns `json:"solves"`
}

// soakOutage is a SIGKILL of the victim, or its exit on its own: when it
// was sent or seen, and when the process was started again (in dev mode:
// when its REST API answered again).
type soakOutage struct {
	At     time.Time `json:"at"`
	Back   time.Time `json:"back"`
	Killed bool      `json:"killed"`
}

// soakKind is the traffic of one kind of request.
type soakKind struct {
	Kind     string         `json:"kind"`
	Total    int            `json:"total"`
	Status2  int            `json:"2xx"`
	Status4  int            `json:"4xx"`
	Status5  int            `json:"5xx"`
	NoAnswer int            `json:"no_answer"`
	Statuses map[string]int `json:"statuses"`
	P50      float64        `json:"p50_ms"`
	P95      float64        `json:"p95_ms"`
	P99      float64        `json:"p99_ms"`
	Max      float64        `json:"max_ms"`
}

// soakFailure counts 5xx answers and requests without an answer.
type soakFailure struct {
	// InOutages overlapped a time the REST API's process was down.
	InOutages int `json:"in_outages"`
	// Outside are all the others: each one fails the run.
	Outside int `json:"outside_outages"`
	// DuringStalls are those of Outside that overlapped a stall of the
	// test process: they still count.
	DuringStalls int `json:"outside_during_stalls"`
	// Examples are the first few outside.
	Examples []failedRequest `json:"examples,omitempty"`
}

// soakOpts is what became of the optimizations created.
type soakOpts struct {
	Created int `json:"created"`
	// Refused were answered a 4xx, or a 5xx or nothing until the clients
	// gave up.
	Refused int            `json:"creates_refused"`
	ByState map[string]int `json:"by_state"`
	// NotFound answered 404 at the end; Stuck were not terminal after the
	// drain. Lost is both.
	NotFound int `json:"not_found"`
	Stuck    int `json:"stuck"`
	Lost     int `json:"lost"`
	// Failed are the failed ones: "id (orders): error_code: error_message".
	Failed []string `json:"failed,omitempty"`
}

// soakSolveRuns counts solves that ran to success more than once.
type soakSolveRuns struct {
	// ByNode counts optimizations with more than one solve pod that
	// succeeded (the Job runner only).
	ByNode *int `json:"solved_twice_by_node,omitempty"`
	// ByWatch counts optimizations the watch saw a result stored for more
	// than once (see solveWatch).
	ByWatch int `json:"stored_twice_by_watch"`
	// Unseen counts completed optimizations the watch never saw a result
	// stored for: it missed something, and ByWatch cannot be trusted.
	Unseen int `json:"completed_unseen_by_watch"`
	// LeftTerminal counts terminal states that changed.
	LeftTerminal int `json:"left_terminal_state"`
	// Relists counts lists of the watch after its first.
	Relists int `json:"watch_relists"`
}

// soakEvents is what the webhook receiver got.
type soakEvents struct {
	Deliveries    int `json:"deliveries"`
	Events        int `json:"distinct_events"`
	Missing       int `json:"missing"`
	WrongType     int `json:"wrong_type"`
	BadSignatures int `json:"bad_signatures"`
	Unreadable    int `json:"unreadable"`
	// Repeats of an event the receiver had answered 2xx (it answers 200
	// to every delivery): AfterKill ones had the process that delivers
	// killed between the first delivery and the repeat; the others had no
	// kill to explain them and fail the run.
	RepeatsAfterKill   int      `json:"repeats_after_kill"`
	RepeatsWithoutKill int      `json:"repeats_without_kill"`
	Repeats            []string `json:"repeat_details,omitempty"`
}

// soakMemory is one process's RSS series and its trend.
type soakMemory struct {
	Process string                   `json:"process"`
	Samples []framework.MemorySample `json:"samples"`
	// Judged is the last process (pid) of the series, after the warm-up.
	JudgedPid int             `json:"judged_pid"`
	Trend     framework.Trend `json:"trend"`
	Growing   bool            `json:"growing"`
}

func (r *soakReport) add(name string) *phaseReport {
	r.mu.Lock()
	defer r.mu.Unlock()
	p := &phaseReport{Name: name, Began: time.Now().UTC()}
	r.Phases = append(r.Phases, p)
	return p
}

// evaluate fills the report from what the phase saw and fails the test
// where a figure is off its bound.
func (p *phaseReport) evaluate(t *testing.T, tg *soakTarget, tr *traffic, ids []created, states, failures map[string]string,
	watch *solveWatch, memory *framework.MemorySampler, refused int) {
	t.Helper()
	p.Victim, p.APIKilled = tg.victim, tg.apiDown

	tr.mu.Lock()
	kinds := make([]string, 0, len(tr.kinds))
	for k := range tr.kinds {
		kinds = append(kinds, k)
	}
	order := map[string]int{"create": 0, "cancel": 1, "record": 2, "list": 3, "result": 4, "check": 5}
	sort.Slice(kinds, func(i, j int) bool { return order[kinds[i]] < order[kinds[j]] })
	for _, k := range kinds {
		kt := tr.kinds[k]
		row := soakKind{Kind: k, Total: kt.total, NoAnswer: kt.noAnswer, Statuses: map[string]int{}}
		for status, n := range kt.byStatus {
			row.Statuses[fmt.Sprint(status)] = n
			switch status / 100 {
			case 2:
				row.Status2 += n
			case 4:
				row.Status4 += n
			case 5:
				row.Status5 += n
			}
		}
		lat := sortedDurations(kt.latencies)
		ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
		row.P50, row.P95, row.P99 = ms(percentile(lat, 50)), ms(percentile(lat, 95)), ms(percentile(lat, 99))
		if len(lat) > 0 {
			row.Max = ms(lat[len(lat)-1])
		}
		p.Requests = append(p.Requests, row)
	}
	for _, f := range tr.failures {
		if tg.apiDown && p.inOutage(f) {
			p.Failures.InOutages++
			continue
		}
		p.Failures.Outside++
		if p.inStall(f) {
			p.Failures.DuringStalls++
		}
		if len(p.Failures.Examples) < 10 {
			p.Failures.Examples = append(p.Failures.Examples, f)
		}
	}
	tr.mu.Unlock()

	p.Optimizations = soakOpts{Created: len(ids), Refused: refused, ByState: map[string]int{}}
	for _, o := range ids {
		s := states[o.id]
		if s == "" {
			s = "no answer"
		}
		p.Optimizations.ByState[s]++
		if f := failures[o.id]; f != "" {
			p.Optimizations.Failed = append(p.Optimizations.Failed, fmt.Sprintf("%s (%d orders, created %s): %s", o.id, o.orders, p.offset(o.at), f))
		}
		switch {
		case s == notFound:
			p.Optimizations.NotFound++
		case !isTerminal(s):
			p.Optimizations.Stuck++
		}
	}
	p.Optimizations.Lost = p.Optimizations.NotFound + p.Optimizations.Stuck

	if tg.solveRuns != nil {
		twice := 0
		for _, o := range ids {
			if tg.solveRuns(o.id) > 1 {
				twice++
			}
		}
		p.Solves.ByNode = &twice
	}
	for _, o := range ids {
		trace := watch.trace(o.id)
		if trace.stores > 1 {
			p.Solves.ByWatch++
		}
		if trace.stores == 0 && states[o.id] == string(v1alpha1.StateCompleted) {
			p.Solves.Unseen++
		}
		p.Solves.LeftTerminal += trace.leftTerminal
	}
	watch.mu.Lock()
	p.Solves.Relists = watch.relists
	watch.mu.Unlock()

	events := tg.hooks.eventsOf()
	tg.hooks.mu.Lock()
	p.Events.Deliveries, p.Events.BadSignatures, p.Events.Unreadable = tg.hooks.deliveries, tg.hooks.badSignatures, tg.hooks.unreadable
	tg.hooks.mu.Unlock()
	for _, o := range ids {
		state := states[o.id]
		evs := events[o.id]
		p.Events.Events += len(evs)
		if isTerminal(state) && !hasEvent(evs, "optimization."+state) {
			p.Events.Missing++
		}
		for _, e := range evs {
			if e.typ != "optimization."+state {
				p.Events.WrongType++
			}
			for _, again := range e.received[1:] {
				kill, ok := p.killBetween(e.received[0], again)
				detail := fmt.Sprintf("%s (%s of %s): first at %s, again at %s", e.id, e.typ, e.optimization, p.offset(e.received[0]), p.offset(again))
				if ok {
					p.Events.RepeatsAfterKill++
					detail += fmt.Sprintf(", %s killed at %s", tg.victim, p.offset(kill))
				} else {
					p.Events.RepeatsWithoutKill++
				}
				p.Events.Repeats = append(p.Events.Repeats, detail)
			}
		}
	}

	for _, name := range tg.pids {
		samples := memory.Series(name)
		last := framework.LastRun(samples)
		m := soakMemory{Process: name, Samples: samples, Trend: framework.MemoryTrend(last, soakWarmUp)}
		if len(last) > 0 {
			m.JudgedPid = last[0].Pid
		}
		m.Growing = m.Trend.Growing(soakMemoryRelative, soakMemoryAbsolute)
		p.Memory = append(p.Memory, m)
	}
	p.Exited = tg.exited()
	for _, o := range p.Outages {
		if !o.Killed {
			p.Exited = append(p.Exited, fmt.Sprintf("%s at %s", tg.victim, p.offset(o.At)))
		}
	}
	if tg.extra != nil {
		tg.extra(p)
	}

	t.Log("\n" + p.markdown())
	p.check(t)
}

// check fails the test on every figure off its bound.
func (p *phaseReport) check(t *testing.T) {
	t.Helper()
	if p.Failures.Outside > 0 {
		t.Errorf("%d requests answered 5xx or not at all outside an outage, for example %+v", p.Failures.Outside, p.Failures.Examples)
	}
	if o := p.Optimizations; o.Refused > 0 || o.Lost > 0 {
		t.Errorf("optimizations: %d creates refused, %d lost (%d not found, %d not terminal after the drain): %v", o.Refused, o.Lost, o.NotFound, o.Stuck, o.ByState)
	}
	if f := p.Optimizations.Failed; len(f) > 0 {
		t.Errorf("%d optimizations failed, although every request is valid and its fleet can carry every order: %v", len(f), f)
	}
	if s := p.Solves; (s.ByNode != nil && *s.ByNode > 0) || s.ByWatch > 0 || s.Unseen > 0 || s.LeftTerminal > 0 {
		t.Errorf("solves: %s", p.solvesLine())
	}
	if e := p.Events; e.Missing > 0 || e.WrongType > 0 || e.BadSignatures > 0 || e.Unreadable > 0 || e.RepeatsWithoutKill > 0 {
		t.Errorf("webhook events: %d missing, %d of the wrong type, %d badly signed, %d unreadable, %d repeated without a kill: %v",
			e.Missing, e.WrongType, e.BadSignatures, e.Unreadable, e.RepeatsWithoutKill, e.Repeats)
	}
	if n := p.Events.RepeatsAfterKill; n > 0 {
		t.Logf("%d events came again after the receiver answered 200, each with %s killed between the delivery and the repeat: delivered, then killed before the delivery was recorded on the optimization; deliveries are at least once", n, p.Victim)
	}
	for _, m := range p.Memory {
		switch {
		case m.Trend.Samples == 0:
			t.Errorf("memory of %s: too few readings of its last process after the %s warm-up to judge a trend (%d readings in all)", m.Process, soakWarmUp, len(m.Samples))
		case m.Growing:
			t.Errorf("memory of %s grows: %s", m.Process, trendLine(m.Trend))
		}
	}
	if len(p.Exited) > 0 {
		t.Errorf("processes ended on their own: %v", p.Exited)
	}
}

// inOutage tells whether f overlapped a time the victim was down.
func (p *phaseReport) inOutage(f failedRequest) bool {
	for _, k := range p.Outages {
		if !f.End.Before(k.At) && !f.Start.After(k.Back) {
			return true
		}
	}
	return false
}

// inStall tells whether f overlapped a stall of the test process.
func (p *phaseReport) inStall(f failedRequest) bool {
	for _, s := range p.Stalls {
		if !f.End.Before(s.At) && !f.Start.After(s.At.Add(s.Late)) {
			return true
		}
	}
	return false
}

// killBetween is an outage that began between first and again.
func (p *phaseReport) killBetween(first, again time.Time) (time.Time, bool) {
	for _, k := range p.Outages {
		if !k.At.Before(first) && k.At.Before(again) {
			return k.At, true
		}
	}
	return time.Time{}, false
}

// offset is at in seconds since the phase's load began.
func (p *phaseReport) offset(at time.Time) string {
	return fmt.Sprintf("%.1f s", at.Sub(p.Began).Seconds())
}

func (p *phaseReport) solvesLine() string {
	s := p.Solves
	line := fmt.Sprintf("%d stored twice (watch, %d relists; %d completed with no store seen), %d terminal states changed", s.ByWatch, s.Relists, s.Unseen, s.LeftTerminal)
	if s.ByNode != nil {
		line = fmt.Sprintf("%d solved twice (solve pods that succeeded); ", *s.ByNode) + line
	}
	return line
}

func trendLine(tr framework.Trend) string {
	const mib = 1 << 20
	return fmt.Sprintf("middle third %.0f MiB, last third %.0f MiB (%+.1f MiB), slope %+.1f MiB/min over %d readings",
		tr.MiddleMean/mib, tr.LastMean/mib, (tr.LastMean-tr.MiddleMean)/mib, tr.SlopePerMinute/mib, tr.Samples)
}

// markdown renders the phase for the report and the test log.
func (p *phaseReport) markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "### %s\n\n", p.Name)
	var kills []string
	for _, k := range p.Outages {
		how := ""
		if !k.Killed {
			how = "exited on its own "
		}
		kills = append(kills, fmt.Sprintf("%s%s (back after %.1f s)", how, p.offset(k.At), k.Back.Sub(k.At).Seconds()))
	}
	fmt.Fprintf(&b, "Load %.0f s: a create every %s (orders %v, solver budgets %v s, every %dth cancelled), %d readers; drain %.0f s. "+
		"SIGKILL of %s at %s. Load average %s before, %s after.\n\n",
		p.LoadSeconds, soakCreateEvery, orderMix, budgetMix, soakCancelEvery, soakReaders, p.DrainSeconds,
		p.Victim, strings.Join(kills, ", "), p.LoadAverageBefore, p.LoadAverageAfter)

	b.WriteString("| requests | total | 2xx | 4xx | 5xx | no answer | statuses | p50 ms | p95 ms | p99 ms | max ms |\n")
	b.WriteString("|---|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|\n")
	for _, r := range p.Requests {
		var codes []string
		for code, n := range r.Statuses {
			codes = append(codes, fmt.Sprintf("%s×%d", code, n))
		}
		slices.Sort(codes)
		fmt.Fprintf(&b, "| %s | %d | %d | %d | %d | %d | %s | %.0f | %.0f | %.0f | %.0f |\n",
			r.Kind, r.Total, r.Status2, r.Status4, r.Status5, r.NoAnswer, strings.Join(codes, " "), r.P50, r.P95, r.P99, r.Max)
	}
	b.WriteString("\n| figure | measured | bound |\n|---|---|---|\n")
	states := make([]string, 0, len(p.Optimizations.ByState))
	for s, n := range p.Optimizations.ByState {
		states = append(states, fmt.Sprintf("%s %d", s, n))
	}
	slices.Sort(states)
	row := func(figure, measured, bound string) { fmt.Fprintf(&b, "| %s | %s | %s |\n", figure, measured, bound) }
	row("optimizations created (202)", fmt.Sprintf("%d: %s", p.Optimizations.Created, strings.Join(states, ", ")), "")
	row("creates refused or given up", fmt.Sprint(p.Optimizations.Refused), "0")
	row("failed (every request is valid)", fmt.Sprint(len(p.Optimizations.Failed)), "0")
	outage := "every one counts: the REST API is never killed"
	if p.APIKilled {
		outage = fmt.Sprintf("%d more while the process was down", p.Failures.InOutages)
	}
	row("5xx or no answer outside outages", fmt.Sprintf("%d, %d of them during a stall (%s)", p.Failures.Outside, p.Failures.DuringStalls, outage), "0")
	row("lost (not found, or not terminal)", fmt.Sprintf("%d (%d not found)", p.Optimizations.Lost, p.Optimizations.NotFound), "0")
	row(fmt.Sprintf("stuck (not terminal %s after the load)", soakDrainTimeout), fmt.Sprint(p.Optimizations.Stuck), "0")
	if p.Solves.ByNode != nil {
		row("solved twice (solve pods run to success)", fmt.Sprintf("%d (pods: %d succeeded, %d failed, %d other)", *p.Solves.ByNode, p.SolvePods.Succeeded, p.SolvePods.Failed, p.SolvePods.Other), "0")
	}
	row("results stored twice (watch of status.resultRef)", fmt.Sprintf("%d (%d relists)", p.Solves.ByWatch, p.Solves.Relists), "0")
	row("completed without a store the watch saw", fmt.Sprint(p.Solves.Unseen), "0")
	row("terminal states that changed", fmt.Sprint(p.Solves.LeftTerminal), "0")
	e := p.Events
	row("webhook deliveries, distinct events", fmt.Sprintf("%d, %d", e.Deliveries, e.Events), "")
	row("webhook events missing / of the wrong type", fmt.Sprintf("%d / %d", e.Missing, e.WrongType), "0")
	row("bad signatures / unreadable deliveries", fmt.Sprintf("%d / %d", e.BadSignatures, e.Unreadable), "0")
	row("events again after a 2xx", fmt.Sprintf("%d without a kill, %d after a kill of %s", e.RepeatsWithoutKill, e.RepeatsAfterKill, p.Victim), "0 without a kill")
	for _, m := range p.Memory {
		measured := "too few readings"
		if m.Trend.Samples > 0 {
			measured = trendLine(m.Trend)
		}
		row(fmt.Sprintf("RSS of %s (pid %d, after %s)", m.Process, m.JudgedPid, soakWarmUp), measured,
			fmt.Sprintf("last third ≤ middle third + max(%.0f %%, %d MiB)", soakMemoryRelative*100, soakMemoryAbsolute>>20))
	}
	longest := time.Duration(0)
	var at string
	for _, s := range p.Stalls {
		if s.Late > longest {
			longest, at = s.Late, p.offset(s.At)
		}
	}
	stalls := "none"
	if len(p.Stalls) > 0 {
		stalls = fmt.Sprintf("%d, the longest %.1f s at %s", len(p.Stalls), longest.Seconds(), at)
	}
	row(fmt.Sprintf("stalls of the test process (a 100 ms sleep %s late or more)", minStall), stalls, "")
	row("processes that ended on their own", fmt.Sprintf("%d %v", len(p.Exited), p.Exited), "0")
	for _, f := range p.Optimizations.Failed {
		fmt.Fprintf(&b, "\nFailed: %s", f)
	}
	for _, d := range e.Repeats {
		fmt.Fprintf(&b, "\nRepeated event: %s", d)
	}
	b.WriteString("\n\nRSS every " + soakSampleEvery.String() + " (seconds since the load began: MiB; | marks a new process):\n\n")
	for _, m := range p.Memory {
		fmt.Fprintf(&b, "- %s: ", m.Process)
		pid := 0
		for i, s := range m.Samples {
			if i > 0 {
				b.WriteString(" ")
				if s.Pid != pid {
					b.WriteString("| ")
				}
			}
			pid = s.Pid
			fmt.Fprintf(&b, "%.0f:%d", s.At.Seconds(), s.RSS>>20)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// write prints the report's location and writes it as Markdown and JSON.
func (r *soakReport) write(t *testing.T) {
	dir := *soakReportDir
	if dir == "" {
		root, err := framework.RepoRoot()
		if err != nil {
			t.Errorf("soak report: %v", err)
			return
		}
		dir = filepath.Join(root, "test-output")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Errorf("soak report: %v", err)
		return
	}
	var b strings.Builder
	fmt.Fprintf(&b, "## Soak run of %s\n\n%d CPUs, %s of load per phase; `make soak`.\n\n", r.Started.Format(time.RFC3339), r.CPUs, time.Duration(r.LoadPerPhase*float64(time.Second)))
	for _, p := range r.Phases {
		b.WriteString(p.markdown())
		b.WriteString("\n")
	}
	raw, err := json.MarshalIndent(r, "", "  ")
	if err == nil {
		err = os.WriteFile(filepath.Join(dir, "soak-report.json"), raw, 0o644)
	}
	if err == nil {
		err = os.WriteFile(filepath.Join(dir, "soak-report.md"), []byte(b.String()), 0o644)
	}
	if err != nil {
		t.Errorf("soak report: %v", err)
		return
	}
	t.Logf("soak report written to %s/soak-report.md and soak-report.json", dir)
}

func cpus() int { return runtime.NumCPU() }

func seconds(d time.Duration) float64 { return d.Round(100 * time.Millisecond).Seconds() }
