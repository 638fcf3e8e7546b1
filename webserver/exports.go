package webserver

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"
	"github.com/google/uuid"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"routeopt.io/routeopt/api/v1alpha1"
	"routeopt.io/routeopt/webserver/docstore"
	"routeopt.io/routeopt/webserver/export"
	"routeopt.io/routeopt/webserver/exportkey"
	"routeopt.io/routeopt/webserver/exportlink"
	"routeopt.io/routeopt/webserver/schema"
)

// Exports (docs/API.md, "Exports and download links"). An export is a
// record on its Optimization, in the
// annotation v1alpha1.ExportsAnnotation, so every API replica answers the
// same and the records go with the optimization at retention. Its file is
// rendered on each download (package export) from the stored result; the
// download link needs no API key: it carries what the download needs,
// signed under the export signing key (package exportkey) named by the
// link's key id (package exportlink).

// DefaultExportLinkTTL is how long a download link lives unless configured.
const DefaultExportLinkTTL = 15 * time.Minute

// exportPatchAttempts bounds the optimistic-lock retries of a create.
const exportPatchAttempts = 5

// ExportRecord is the REST record of an export.
type ExportRecord struct {
	ID                        string `json:"id"`
	OptimizationID            string `json:"optimization_id"`
	Format                    string `json:"format"`
	IncludeDriverInstructions bool   `json:"include_driver_instructions"`
	DownloadURL               string `json:"download_url"`
	ExpiresAt                 string `json:"expires_at"`
	CreatedAt                 string `json:"created_at"`
}

// storedExport is one export in the Optimization's annotation. The link is
// not stored (it would be a bearer credential in plain sight of anyone who
// may read the Optimization): it is signed again from these fields, with
// the key KeyID names, and comes out the same.
type storedExport struct {
	ID                        string    `json:"id"`
	Format                    string    `json:"format"`
	IncludeDriverInstructions bool      `json:"includeDriverInstructions"`
	KeyID                     string    `json:"keyID"`
	CreatedAt                 time.Time `json:"createdAt"`
	ExpiresAt                 time.Time `json:"expiresAt"`
}

// live reports whether the export's link still works at now with keys.
func (e storedExport) live(now time.Time, keys *exportkey.Keys) bool {
	return now.Before(e.ExpiresAt) && keys.ByID(e.KeyID) != nil
}

// storedExports reads the annotation; one that cannot be read holds no
// usable export (the next create writes a good one over it).
func storedExports(opt *v1alpha1.Optimization) []storedExport {
	raw := opt.Annotations[v1alpha1.ExportsAnnotation]
	if raw == "" {
		return nil
	}
	var out []storedExport
	if err := json.Unmarshal([]byte(raw), &out); err != nil {
		return nil
	}
	return out
}

// link is the download link of e, an export of opt made by tenant.
func (e storedExport) link(tenant string, opt *v1alpha1.Optimization) exportlink.Link {
	return exportlink.Link{
		ExportID: e.ID, Tenant: tenant, OptimizationID: opt.Name, OptimizationUID: string(opt.UID),
		Format: e.Format, Include: strconv.FormatBool(e.IncludeDriverInstructions),
		Expires: strconv.FormatInt(e.ExpiresAt.Unix(), 10), KeyID: e.KeyID,
	}
}

// exportRecord renders e with its link signed by key.
func (s *Server) exportRecord(tenant string, opt *v1alpha1.Optimization, e storedExport, key *exportkey.Key) ExportRecord {
	return ExportRecord{
		ID: e.ID, OptimizationID: opt.Name, Format: e.Format, IncludeDriverInstructions: e.IncludeDriverInstructions,
		DownloadURL: e.link(tenant, opt).URL(s.baseURL, key.Key),
		ExpiresAt:   timestamp(e.ExpiresAt), CreatedAt: timestamp(e.CreatedAt),
	}
}

// createExport answers POST /v1/optimizations/{id}/exports: the live export
// of the same arguments, else a new one (201 either way).
func (s *Server) createExport(c *gin.Context) {
	body, ok := readBody(c)
	if !ok {
		return
	}
	in, details := schema.DecodeExportIn(body)
	if len(details) > 0 && details[0].Type == "json_invalid" {
		// FastAPI parses the body before it validates anything else.
		abortValidation(c, details)
		return
	}
	opt, ok := s.lookup(c, details...)
	if !ok {
		return
	}
	if state := stateOf(opt); state != v1alpha1.StateCompleted {
		abortError(c, http.StatusConflict, CodeResultNotReady, "the optimization is "+string(state)+"; it can be exported once it is completed", map[string]any{"status": string(state)})
		return
	}
	ctx, cancel := s.kubeContext(c)
	defer cancel()
	keys, err := s.exportKeys.Current(ctx)
	if err != nil {
		abortKube(c, err, "export signing key")
		return
	}
	p := principal(c)
	e, opt, err := s.findOrAddExport(ctx, opt, in, keys)
	if err != nil {
		abortKube(c, err, "optimization")
		return
	}
	// PureJSON: the link's & stay & (not \u0026), so a person can copy it
	// from a terminal.
	c.PureJSON(http.StatusCreated, s.exportRecord(p.CompanyID, opt, e, keys.ByID(e.KeyID)))
}

// findOrAddExport returns the live export of opt with in's arguments, or
// adds a new one to the annotation (dropping exports whose links no longer
// work). The merge patch carries the resourceVersion it was computed from:
// when another replica wrote first, it reads the Optimization again and
// starts over, so concurrent creates of the same arguments agree on one
// export. It returns the export and the Optimization it was found on.
func (s *Server) findOrAddExport(ctx context.Context, opt *v1alpha1.Optimization, in *schema.ExportIn, keys *exportkey.Keys) (storedExport, *v1alpha1.Optimization, error) {
	for attempt := 1; ; attempt++ {
		now := s.clock.Now()
		exports := storedExports(opt)
		for _, e := range exports {
			if e.Format == in.Format && e.IncludeDriverInstructions == in.IncludeDriverInstructions && e.live(now, keys) {
				return e, opt, nil
			}
		}
		created := now.UTC().Truncate(time.Second)
		e := storedExport{
			ID: uuid.NewString(), Format: in.Format, IncludeDriverInstructions: in.IncludeDriverInstructions,
			KeyID: keys.Current.ID, CreatedAt: created, ExpiresAt: created.Add(s.opts.ExportLinkTTL).Truncate(time.Second),
		}
		kept := slices.DeleteFunc(exports, func(e storedExport) bool { return !e.live(now, keys) })
		value, err := json.Marshal(append(kept, e))
		if err != nil {
			return storedExport{}, nil, err
		}
		patch, err := json.Marshal(map[string]any{"metadata": map[string]any{
			"resourceVersion": opt.ResourceVersion,
			"annotations":     map[string]string{v1alpha1.ExportsAnnotation: string(value)},
		}})
		if err != nil {
			return storedExport{}, nil, err
		}
		patched := &v1alpha1.Optimization{}
		patched.Namespace, patched.Name = opt.Namespace, opt.Name
		err = s.client.Patch(ctx, patched, client.RawPatch(types.MergePatchType, patch))
		if err == nil {
			return e, patched, nil
		}
		if !apierrors.IsConflict(err) || attempt == exportPatchAttempts {
			return storedExport{}, nil, err
		}
		fresh := &v1alpha1.Optimization{}
		if err := s.apiReader.Get(ctx, client.ObjectKeyFromObject(opt), fresh); err != nil {
			return storedExport{}, nil, err
		}
		if fresh.UID != opt.UID {
			return storedExport{}, nil, apierrors.NewNotFound(v1alpha1.GroupVersion.WithResource("optimizations").GroupResource(), opt.Name)
		}
		opt = fresh
	}
}

// downloadExport answers GET /v1/exports/{export_id}, the signed link: no
// API key. The signature is checked first (403 invalid_signature), then the
// expiry (410 link_expired), then that the optimization and its export are
// still there (404); then the file is rendered from the stored result.
func (s *Server) downloadExport(c *gin.Context) {
	// Nothing of a link's answers is for a shared cache or a browser's
	// guesswork, errors included.
	c.Header("Cache-Control", "private, no-store")
	c.Header("X-Content-Type-Options", "nosniff")
	l, signature, exact := exportlink.FromQuery(c.Param("export_id"), c.Request.URL.Query())
	ctx, cancel := s.kubeContext(c)
	defer cancel()
	key, err := s.exportKeys.Lookup(ctx, l.KeyID)
	if err != nil {
		abortKube(c, err, "export signing key")
		return
	}
	if key == nil || !exact || !l.Verify(key.Key, signature) {
		abortError(c, http.StatusForbidden, CodeInvalidSignature, "the link's signature is not valid: use the download_url of an export exactly as it was given", nil)
		return
	}
	// Signed, so well formed: the server wrote every field.
	expires, err := strconv.ParseInt(l.Expires, 10, 64)
	if err != nil {
		abortError(c, http.StatusForbidden, CodeInvalidSignature, "the link's expiry is not valid", nil)
		return
	}
	if expiresAt := time.Unix(expires, 0); !s.clock.Now().Before(expiresAt) {
		abortError(c, http.StatusGone, CodeLinkExpired, "the link expired at "+timestamp(expiresAt)+"; create the export again for a new link", map[string]any{"expires_at": timestamp(expiresAt)})
		return
	}
	opt := &v1alpha1.Optimization{}
	err = s.apiReader.Get(ctx, client.ObjectKey{Namespace: v1alpha1.TenantNamespace(l.Tenant), Name: l.OptimizationID}, opt)
	if apierrors.IsNotFound(err) || err == nil && (string(opt.UID) != l.OptimizationUID || !hasExport(opt, l)) {
		abortError(c, http.StatusNotFound, CodeNotFound, "export not found", nil)
		return
	}
	if err != nil {
		abortKube(c, err, "optimization")
		return
	}
	if state := stateOf(opt); state != v1alpha1.StateCompleted {
		abortError(c, http.StatusConflict, CodeResultNotReady, "the optimization is "+string(state)+"; it can be exported once it is completed", map[string]any{"status": string(state)})
		return
	}
	result := s.storedResult(ctx, c, opt, false)
	if result == nil {
		return
	}
	// The sheet takes each order's phone, notes and service minutes from
	// the input: the result does not carry them.
	if err := docstore.ReadInput(ctx, s.apiReader, opt); err != nil {
		var read *docstore.ReadError
		if errors.As(err, &read) {
			abortKube(c, err, "optimization input")
		} else {
			abortInternal(c, err)
		}
		return
	}
	format := export.Format(l.Format)
	c.Header("Content-Type", export.ContentType(format))
	c.Header("Content-Disposition", export.ContentDisposition(export.DownloadName(opt, format)))
	c.Status(http.StatusOK)
	if err := export.Write(c.Writer, opt, result, export.Options{Format: format, IncludeDriverInstructions: l.Include == "true"}); err != nil {
		if !c.Writer.Written() {
			c.Writer.Header().Del("Content-Disposition")
			abortInternal(c, err)
			return
		}
		// Part of the file is out: cut the connection so the client sees
		// a broken download, not a short file that looks whole.
		loggerFrom(c).Error(err, "Export failed while streaming", "optimization", opt.Namespace+"/"+opt.Name, "export", l.ExportID)
		panic(http.ErrAbortHandler)
	}
}

// hasExport reports whether opt still has the export l links to: deleting
// the record (or the annotation) revokes its link.
func hasExport(opt *v1alpha1.Optimization, l exportlink.Link) bool {
	for _, e := range storedExports(opt) {
		if e.ID == l.ExportID && e.Format == l.Format && strconv.FormatBool(e.IncludeDriverInstructions) == l.Include {
			return true
		}
	}
	return false
}
