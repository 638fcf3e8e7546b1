package browser

import (
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
)

// TestTiles runs dev mode with --map-tile-url pointing at a tile server of
// the test's own: the map is Leaflet on those tiles, with the routes, the
// stops, the depot and the attribution, and the places where routes start
// and end; images come from the tile server (which the CSP allows, and
// nothing else outside) and every other request stays on the origin.
func TestTiles(t *testing.T) {
	requireChromium(t)
	t.Parallel()
	var mu sync.Mutex
	var served []string
	tilePath := regexp.MustCompile(`^/\d+/\d+/\d+\.png$`)
	tiles := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !tilePath.MatchString(r.URL.Path) {
			http.NotFound(w, r)
			return
		}
		mu.Lock()
		served = append(served, r.URL.Path)
		mu.Unlock()
		w.Header().Set("Content-Type", "image/png")
		_, _ = w.Write(tilePNG)
	}))
	defer tiles.Close()

	d := extraDev(t, "tiles", "--map-tile-url", tiles.URL+"/{z}/{x}/{y}.png", "--map-tile-attribution", "Test tiles © nobody")

	resp := get(t, d.URL+"/portal/")
	shell := readBody(t, resp)
	checkCSP(t, "/portal/ (with tiles)", resp.Header.Get("Content-Security-Policy"), []string{tiles.URL})
	if !strings.Contains(shell, `<meta name="routeopt-map-tile-url" content="`+tiles.URL+`/{z}/{x}/{y}.png">`) {
		t.Errorf("the shell does not carry the tile URL in its meta tag:\n%s", shell)
	}

	c := d.newCompany(t, "Tiles Test GmbH")
	o := c.create(t, smallProblem("On tiles"))
	c.waitStatus(t, o.ID, "completed")
	res := c.result(t, o.ID)
	routes := routesWithStops(res)
	stops := 0
	for _, rt := range routes {
		stops += len(rt.Stops)
	}

	p := openPage(t, d)
	p.allowOrigin(tiles.URL)
	p.navigate("/portal/optimizations/" + o.ID)
	p.signIn(c.key)
	p.waitVisible("#route-map .leaflet-container")
	p.waitCount("#route-map .route-path", len(routes))
	p.waitCount("#route-map .stop-marker", stops)
	p.waitCount("#route-map .depot-marker", 1)
	p.waitJS("tiles to load", `Array.from(document.querySelectorAll("#route-map img.leaflet-tile")).some(i => i.complete && i.naturalWidth === 256)`)
	p.waitText("#route-map .leaflet-control-attribution", "Test tiles © nobody")
	if n := p.count("#map-legend li[data-route]"); n != len(routes) {
		t.Errorf("the legend has %d entries, want %d", n, len(routes))
	}
	mu.Lock()
	n := len(served)
	mu.Unlock()
	if n == 0 {
		t.Error("the tile server served no tile")
	}

	// A plan whose routes start and end elsewhere than the depot: Leaflet
	// marks the same places as the offline map.
	f := c.create(t, smallProblem("Fleet on tiles"))
	c.waitStatus(t, f.ID, "completed")
	storeResult(t, d, f.ID, fleetResult(f.ID))
	p.navigate("/portal/optimizations/" + f.ID)
	p.waitVisible("#route-map .leaflet-container")
	p.waitCount("#route-map .route-path", 3)
	p.waitCount("#route-map .place-marker", 3)
	places := eval[[]string](p, `Array.from(document.querySelectorAll("#route-map .place-marker")).map(m =>
		[...m.classList].filter(c => c.endsWith("-marker") && c !== "place-marker").join(" ") + " " + m.dataset.startRoutes + "/" + m.dataset.endRoutes).sort()`)
	if want := []string{"depot-marker 1 2/0", "route-end-marker /2", "route-start-marker 0/"}; strings.Join(places, ", ") != strings.Join(want, ", ") {
		t.Errorf("place markers (class starts/ends) %q, want %q", places, want)
	}

	for _, r := range p.Requests() {
		if strings.HasPrefix(r.URL, tiles.URL) && (r.Type != "Image" || !tilePath.MatchString(strings.TrimPrefix(r.URL, tiles.URL))) {
			t.Errorf("the page asked the tile server for %s (%s), not a tile image", r.URL, r.Type)
		}
	}
}
