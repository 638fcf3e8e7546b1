package app

import (
	"fmt"
	"strconv"
	"time"

	"github.com/spf13/pflag"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"routeopt.io/routeopt/solver"
	"routeopt.io/routeopt/solver/geobudget"
	"routeopt.io/routeopt/solver/geocode"
	"routeopt.io/routeopt/solver/matrix"
)

// ProviderOptions choose the geocoder and the travel-matrix provider of the
// solve pipeline. The manager passes them on to solve Jobs as flags.
type ProviderOptions struct {
	geocoder            string
	nominatimURL        string
	nominatimUserAgent  string
	nominatimEmail      string
	nominatimRate       float64
	nominatimConcurrent int
	geocodeCacheTTL     time.Duration
	geocodeMaxWait      time.Duration

	matrix      string
	osrmURL     string
	osrmProfile string
	speedKmh    float64
	circuity    float64
}

// NewProviderOptions parses provider flags (as the manager takes them, e.g.
// "--geocoder=nominatim", "--nominatim-url=...", "--geocode-max-wait=1m");
// no arguments give the flags' defaults: no geocoder, haversine.
func NewProviderOptions(args ...string) (*ProviderOptions, error) {
	o := &ProviderOptions{}
	f := pflag.NewFlagSet("providers", pflag.ContinueOnError)
	o.addFlags(f)
	o.addBudgetFlags(f)
	if err := f.Parse(args); err != nil {
		return nil, err
	}
	return o, nil
}

// SolvePipeline is the pipeline `routeopt solve` runs with o's providers,
// writing through c. Tests play a Job's pod with it, given the options of
// the Job's command line, since the solve command itself calls
// SetupSignalHandler, which a process may call once.
func (o *ProviderOptions) SolvePipeline(c client.Client) (*solver.Pipeline, error) {
	p := &solver.Pipeline{Client: c}
	if err := o.pipeline(p); err != nil {
		return nil, err
	}
	return p, nil
}

func (o *ProviderOptions) addFlags(f *pflag.FlagSet) {
	f.StringVar(&o.geocoder, "geocoder", "none", "geocoder for orders without coordinates: none or nominatim (solve Jobs are given prefetched: only the answers the manager geocoded)")
	f.StringVar(&o.nominatimURL, "nominatim-url", "", "base URL of a Nominatim server (required with --geocoder=nominatim)")
	f.StringVar(&o.nominatimUserAgent, "nominatim-user-agent", geocode.DefaultUserAgent, "User-Agent sent to Nominatim (its usage policy asks for one that identifies you)")
	f.StringVar(&o.nominatimEmail, "nominatim-email", "", "contact email sent to Nominatim")
	f.Float64Var(&o.nominatimRate, "nominatim-rate", 1, "Nominatim requests per second (the public server allows 1)")
	f.IntVar(&o.nominatimConcurrent, "nominatim-concurrency", 1, "Nominatim requests in flight at once")
	f.DurationVar(&o.geocodeCacheTTL, "geocode-cache-ttl", geocode.DefaultCacheTTL, "how long a tenant's geocoding answers are reused")
	f.StringVar(&o.matrix, "matrix", "haversine", "travel matrix: haversine (great circle x circuity at a constant speed) or osrm")
	f.StringVar(&o.osrmURL, "osrm-url", "", "base URL of an OSRM server (required with --matrix=osrm)")
	f.StringVar(&o.osrmProfile, "osrm-profile", matrix.DefaultOSRMProfile, "OSRM profile")
	f.Float64Var(&o.speedKmh, "haversine-speed-kmh", matrix.DefaultSpeedKmh, "average speed of the haversine matrix")
	f.Float64Var(&o.circuity, "haversine-circuity", matrix.DefaultCircuity, "road distance per straight-line distance of the haversine matrix")
}

// addBudgetFlags adds the flags of the manager's geocoding budget (manager
// and dev only: solve Jobs send no geocoding requests).
func (o *ProviderOptions) addBudgetFlags(f *pflag.FlagSet) {
	f.DurationVar(&o.geocodeMaxWait, "geocode-max-wait", 30*time.Minute,
		"fail an optimization up front (geocoding_unavailable) when its new addresses, at --nominatim-rate behind the addresses already waiting, would take longer than this; 0: no limit")
}

// geocodes reports whether solves ask a geocoding service.
func (o *ProviderOptions) geocodes() bool { return o.geocoder == "nominatim" }

// budget is the installation's one geocoding rate, for the manager.
func (o *ProviderOptions) budget() *geobudget.Budget {
	r := o.nominatimRate
	if r == 0 {
		r = geocode.DefaultNominatimRate
	}
	return &geobudget.Budget{Rate: r, MaxWait: o.geocodeMaxWait}
}

// pipeline builds the solve pipeline's providers from the options.
func (o *ProviderOptions) pipeline(p *solver.Pipeline) error {
	switch o.geocoder {
	case "none", "":
	case "prefetched":
		p.Geocoder = geocode.Prefetched{}
	case "nominatim":
		if o.nominatimURL == "" {
			return fmt.Errorf("--nominatim-url is required with --geocoder=nominatim")
		}
		g, err := geocode.NewNominatim(geocode.NominatimOptions{
			BaseURL: o.nominatimURL, UserAgent: o.nominatimUserAgent, Email: o.nominatimEmail,
			RatePerSecond: o.nominatimRate, MaxConcurrent: o.nominatimConcurrent,
		})
		if err != nil {
			return err
		}
		p.Geocoder = g
	default:
		return fmt.Errorf("--geocoder must be none or nominatim, not %q", o.geocoder)
	}
	p.GeocodeCacheTTL = o.geocodeCacheTTL
	switch o.matrix {
	case "haversine", "":
		p.Matrix = matrix.Haversine{SpeedKmh: o.speedKmh, Circuity: o.circuity}
	case "osrm":
		if o.osrmURL == "" {
			return fmt.Errorf("--osrm-url is required with --matrix=osrm")
		}
		p.Matrix = &matrix.OSRM{BaseURL: o.osrmURL, Profile: o.osrmProfile}
	default:
		return fmt.Errorf("--matrix must be haversine or osrm, not %q", o.matrix)
	}
	return nil
}

// args are the flags that give a solve Job the same providers, except
// that a Job with a geocoder gets prefetched: the manager geocodes, so the
// installation's rate is spent in one place.
func (o *ProviderOptions) args() []string {
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	geocoder := o.geocoder
	if o.geocodes() {
		geocoder = "prefetched"
	}
	return []string{
		"--geocoder=" + geocoder, "--geocode-cache-ttl=" + o.geocodeCacheTTL.String(),
		"--matrix=" + o.matrix, "--osrm-url=" + o.osrmURL, "--osrm-profile=" + o.osrmProfile,
		"--haversine-speed-kmh=" + f(o.speedKmh), "--haversine-circuity=" + f(o.circuity),
	}
}
