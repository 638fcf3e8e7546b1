package controllers

import (
	"context"
	"errors"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"routeopt.io/routeopt/api/v1alpha1"
	"routeopt.io/routeopt/solver/geobudget"
	"routeopt.io/routeopt/solver/record"
	"routeopt.io/routeopt/solver/store"
)

// scriptedSolver admits with the errors of pending first (one per call),
// then reserves addresses on the budget (or fails with refuse), and
// records the ticket each run gets.
type scriptedSolver struct {
	pending   []error
	addresses int
	refuse    error
	admits    int
	ran       []*geobudget.Ticket
	waiting   int // the budget's backlog while the solve ran
	budget    *geobudget.Budget
}

func (s *scriptedSolver) AdmitGeocoding(_ context.Context, _ types.NamespacedName, b *geobudget.Budget) (*geobudget.Ticket, error) {
	s.admits++
	if len(s.pending) > 0 {
		err := s.pending[0]
		s.pending = s.pending[1:]
		return nil, err
	}
	if s.refuse != nil {
		return nil, s.refuse
	}
	return b.Admit(s.addresses)
}

func (s *scriptedSolver) Run(_ context.Context, _ types.NamespacedName, t *geobudget.Ticket) error {
	s.ran = append(s.ran, t)
	s.waiting = s.budget.Waiting()
	return nil
}

func (s *scriptedSolver) Geocode(context.Context, types.NamespacedName, *geobudget.Ticket) error {
	return errors.New("the in-process runner does not geocode apart")
}

// The in-process runner admits a solve's geocoding before running it,
// waits (as the pipeline does) for an input ConfigMap not written yet,
// hands the solve its ticket and gives the ticket's addresses back after.
func TestInProcessRunnerAdmitsThenRuns(t *testing.T) {
	refused := record.Failf(v1alpha1.ErrorGeocodingUnavailable, "3 address(es) need geocoding")
	for _, tc := range []struct {
		name       string
		solver     *scriptedSolver
		wantErr    error
		wantAdmits int
		wantRuns   int
	}{
		{name: "admitted", solver: &scriptedSolver{addresses: 3}, wantAdmits: 1, wantRuns: 1},
		{name: "input written late", solver: &scriptedSolver{addresses: 3, pending: []error{store.ErrInputPending, store.ErrInputPending}}, wantAdmits: 3, wantRuns: 1},
		{name: "refused: never runs", solver: &scriptedSolver{refuse: refused}, wantErr: refused, wantAdmits: 1},
		{name: "cancelled meanwhile", solver: &scriptedSolver{refuse: context.Canceled}, wantErr: context.Canceled, wantAdmits: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			budget := &geobudget.Budget{Rate: 1}
			tc.solver.budget = budget
			r := NewInProcessRunner(context.Background(), tc.solver, 1)
			r.Budget = budget
			opt := &v1alpha1.Optimization{ObjectMeta: metav1.ObjectMeta{Namespace: "tenant-a", Name: "opt", UID: "uid-1"}}
			err := r.run(context.Background(), opt)
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("run = %v, want %v", err, tc.wantErr)
			}
			if tc.solver.admits != tc.wantAdmits || len(tc.solver.ran) != tc.wantRuns {
				t.Fatalf("%d admissions and %d runs, want %d and %d", tc.solver.admits, len(tc.solver.ran), tc.wantAdmits, tc.wantRuns)
			}
			if tc.wantRuns > 0 {
				if tk := tc.solver.ran[0]; tk == nil || tk.Addresses != tc.solver.addresses || tc.solver.waiting != tc.solver.addresses {
					t.Errorf("the solve ran with ticket %+v and %d addresses waiting, want its %d admitted ones", tk, tc.solver.waiting, tc.solver.addresses)
				}
			}
			if got := budget.Waiting(); got != 0 {
				t.Errorf("%d addresses still waiting after the run, want 0", got)
			}
		})
	}
}
