# routeopt Makefile. Every tool is pinned and built from Go modules into bin/,
# so `make run` and `make test` work on a fresh machine with only Go installed.

SHELL := /usr/bin/env bash -o pipefail
.SHELLFLAGS := -ec
export GOTOOLCHAIN := local

LOCALBIN ?= $(CURDIR)/bin
K8SBIN ?= $(LOCALBIN)/k8s
IMG ?= routeopt:dev
CONTAINER_TOOL ?= docker

CONTROLLER_GEN_VERSION ?= v0.23.0
KUSTOMIZE_VERSION ?= v5.8.1
GOLANGCI_LINT_VERSION ?= v2.15.0
# The Kube API Linter is pinned to a commit (a Go pseudo-version).
KUBE_API_LINTER_VERSION ?= v0.0.0-20260716143926-092fe0c72997
# deadcode is golang.org/x/tools/cmd/deadcode of this golang.org/x/tools release.
DEADCODE_VERSION ?= v0.51.0
# The control plane (kube-apiserver v1.36.3, etcd v3.6.x) is pinned in hack/k8s/go.mod.
# The Dockerfile linter (BuildKit v0.34.2's checks) is pinned in hack/dockerfile-lint/go.mod.

CONTROLLER_GEN ?= $(LOCALBIN)/controller-gen-$(CONTROLLER_GEN_VERSION)
KUSTOMIZE ?= $(LOCALBIN)/kustomize-$(KUSTOMIZE_VERSION)
GOLANGCI_LINT ?= $(LOCALBIN)/golangci-lint-$(GOLANGCI_LINT_VERSION)
KUBE_API_LINTER ?= $(LOCALBIN)/golangci-lint-kube-api-linter-$(KUBE_API_LINTER_VERSION)
DEADCODE ?= $(LOCALBIN)/deadcode-$(DEADCODE_VERSION)
DOCKERFILE_LINT ?= $(LOCALBIN)/dockerfile-lint

# The portal (webserver/portal): TypeScript built by esbuild into
# webserver/portal/dist, which is committed and embedded in the binary, so
# a machine with only Go builds and runs everything; with npm on PATH the
# build targets rebuild it first.
PORTAL_WEB := webserver/portal/web
NPM ?= npm
HAVE_NPM := $(shell command -v $(NPM) 2>/dev/null)
PORTAL_PREREQ := $(if $(HAVE_NPM),portal,portal-skip)

# Test knobs: TEST_TIMEOUT bounds the whole run; GOTEST_FLAGS adds flags.
TEST_TIMEOUT ?= 20m
GOTEST_FLAGS ?=
# The race detector slows code by 2 to 20 times: RACE_TIMEOUT bounds that run.
RACE_TIMEOUT ?= 45m
# Fuzzing knobs: FUZZTIME per target, FUZZ selects targets by name (a regexp).
FUZZTIME ?= 30s
FUZZ ?= .

.PHONY: all
all: build

##@ General

.PHONY: help
help: ## Show this help.
	@awk 'BEGIN {FS = ":.*##"; printf "\nUsage:\n  make \033[36m<target>\033[0m\n"} /^[a-zA-Z_0-9-]+:.*?##/ { printf "  \033[36m%-16s\033[0m %s\n", $$1, $$2 } /^##@/ { printf "\n\033[1m%s\033[0m\n", substr($$0, 5) } ' $(MAKEFILE_LIST)

##@ Development

.PHONY: manifests
manifests: $(CONTROLLER_GEN) ## Generate CRDs and RBAC (manager and API roles) from markers.
	$(CONTROLLER_GEN) crd:allowDangerousTypes=true paths="./api/..." output:crd:artifacts:config=config/crd/bases
	$(CONTROLLER_GEN) rbac:roleName=routeopt-manager,fileName=manager_role.yaml paths="./controllers/..." paths="./cmd/..." output:rbac:artifacts:config=config/rbac
	$(CONTROLLER_GEN) rbac:roleName=routeopt-api,fileName=api_role.yaml paths="./webserver/..." output:rbac:artifacts:config=config/rbac

.PHONY: generate
generate: $(CONTROLLER_GEN) ## Generate deepcopy code.
	$(CONTROLLER_GEN) object:headerFile="hack/boilerplate.go.txt" paths="./api/..."

.PHONY: fmt
fmt: ## Run gofmt.
	gofmt -w $$(git ls-files '*.go')

.PHONY: vet
vet: ## Run go vet.
	go vet ./...

.PHONY: lint
lint: $(GOLANGCI_LINT) lint-api lint-dockerfile ## Run golangci-lint, the Kube API Linter and the Dockerfile checks.
	$(GOLANGCI_LINT) run ./...

.PHONY: lint-api
lint-api: $(KUBE_API_LINTER) ## Lint the CRD types (api/) with the Kube API Linter (.golangci-kal.yml).
	$(KUBE_API_LINTER) run -c .golangci-kal.yml ./api/...

.PHONY: lint-dockerfile
lint-dockerfile: $(DOCKERFILE_LINT) ## Lint the Dockerfile with BuildKit's checks (those of docker build --check).
	cd hack/dockerfile-lint && go test -count=1 ./...
	$(DOCKERFILE_LINT) Dockerfile

.PHONY: verify
verify: manifests generate portal deadcode ## Fail when generated files (CRDs, RBAC, the portal build) are stale, code is not gofmt-clean, a function is dead, or a tracked file speaks of anything but the product.
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); echo "gofmt needed"; exit 1; }
	@go run ./hack/productonly || { echo "tracked files must speak of the product only: reword, or allow a real use in hack/productonly/allow.txt"; exit 1; }
	@git diff --exit-code -- config api || { echo "generated files are stale: run make manifests generate"; exit 1; }
	@go mod tidy -diff || { echo "go.mod is not tidy: run go mod tidy"; exit 1; }
	@test -z "$$(git status --porcelain -- webserver/portal/dist)" || { git status --porcelain -- webserver/portal/dist; echo "portal build is stale: run make portal"; exit 1; }

# The product's packages: every top-level directory but test/, whose
# packages exist for the tests (a function only tests call is dead there).
DEADCODE_PACKAGES := ^routeopt\.io/routeopt/(api|cmd|controllers|hack|solver|webserver)(/|$$)

.PHONY: deadcode
deadcode: $(DEADCODE) ## Fail on a function of the product that no command (main package) reaches; test/ is left out.
	@out=$$($(DEADCODE) -filter '$(DEADCODE_PACKAGES)' ./...); \
	test -z "$$out" || { echo "$$out"; echo "unreachable from every command: use it, move it into a _test.go file, or delete it"; exit 1; }

.PHONY: portal-deps
portal-deps: $(PORTAL_WEB)/node_modules/.package-lock.json ## Install the portal's pinned npm packages (npm ci).

# npm ci writes node_modules/.package-lock.json last: newer than
# package-lock.json means the install is complete and current.
$(PORTAL_WEB)/node_modules/.package-lock.json: $(PORTAL_WEB)/package-lock.json $(PORTAL_WEB)/package.json
	@test -n "$(HAVE_NPM)" || { echo "$(NPM) not found: building the portal needs Node.js 18+ and npm on PATH"; exit 1; }
	cd $(PORTAL_WEB) && $(NPM) ci --no-audit --no-fund
	@touch $@

.PHONY: portal
portal: portal-deps ## Type-check and build the portal into webserver/portal/dist (needs Node.js 18+ and npm).
	cd $(PORTAL_WEB) && $(NPM) run --silent check && $(NPM) run --silent build

.PHONY: portal-skip
portal-skip:
	@echo "npm not found: using the committed portal build in webserver/portal/dist (install Node.js 18+ and npm to rebuild it)"

.PHONY: envtest
envtest: $(K8SBIN)/kube-apiserver $(K8SBIN)/etcd $(K8SBIN)/kube-controller-manager ## Build the local control plane (kube-apiserver, etcd, kube-controller-manager) into bin/k8s.

$(K8SBIN)/kube-apiserver: hack/k8s/go.mod hack/k8s/go.sum
	cd hack/k8s && CGO_ENABLED=0 go build -trimpath -o $(K8SBIN)/kube-apiserver k8s.io/kubernetes/cmd/kube-apiserver

$(K8SBIN)/etcd: hack/k8s/go.mod hack/k8s/go.sum
	cd hack/k8s && CGO_ENABLED=0 go build -trimpath -o $(K8SBIN)/etcd go.etcd.io/etcd/server/v3

$(K8SBIN)/kube-controller-manager: hack/k8s/go.mod hack/k8s/go.sum
	cd hack/k8s && CGO_ENABLED=0 go build -trimpath -o $(K8SBIN)/kube-controller-manager k8s.io/kubernetes/cmd/kube-controller-manager

.PHONY: kubectl
kubectl: $(K8SBIN)/kubectl ## Build kubectl (same version as the control plane) into bin/k8s.

$(K8SBIN)/kubectl: hack/k8s/go.mod hack/k8s/go.sum
	cd hack/k8s && CGO_ENABLED=0 go build -trimpath -o $(K8SBIN)/kubectl k8s.io/kubernetes/cmd/kubectl

# The test tiers, by package; make test runs them all in one go test.
# Integration: the envtest suites and the dev-mode tests (cmd/routeopt/app
# and its devplane start a real etcd and kube-apiserver); e2e: routeopt's
# processes, built from source, against a control plane; browser: the
# portal in headless Chromium; unit: every other package.
TEST_INTEGRATION_PKGS := ./test/integration/ ./cmd/routeopt/app/...
TEST_E2E_PKGS := ./test/e2e/...
TEST_BROWSER_PKGS := ./test/browser/
TEST_UNIT_PKGS = $(shell go list ./... | grep -Ev '^routeopt\.io/routeopt/(test/(integration|e2e|browser)|cmd/routeopt/app)(/|$$)')
GOTEST = go test -timeout $(TEST_TIMEOUT) -artifacts -outputdir=$(CURDIR)/test-output $(GOTEST_FLAGS)

.PHONY: test
test: manifests generate envtest vet test-installers build-static portal-deps ## Run every test (the four tiers below at once), after go vet and the static-build check; screenshots land in test-output/.
	@mkdir -p test-output
	KUBEBUILDER_ASSETS=$(K8SBIN) $(GOTEST) ./...

.PHONY: test-unit
test-unit: manifests generate ## Run the unit tests: every package but the integration, e2e and browser tiers'; no control plane.
	@mkdir -p test-output
	$(GOTEST) $(TEST_UNIT_PKGS)

.PHONY: test-integration
test-integration: manifests generate envtest test-installers ## Run test/integration (envtest) and the dev-mode tests of cmd/routeopt/app, on the local control plane.
	@mkdir -p test-output
	KUBEBUILDER_ASSETS=$(K8SBIN) $(GOTEST) $(TEST_INTEGRATION_PKGS)

.PHONY: test-e2e
test-e2e: manifests generate envtest build-installer ## Run test/e2e: routeopt's processes with the real Job controller and garbage collector.
	@mkdir -p test-output
	KUBEBUILDER_ASSETS=$(K8SBIN) $(GOTEST) $(TEST_E2E_PKGS)

.PHONY: test-browser
test-browser: manifests generate envtest portal-deps ## Run test/browser: the portal in headless Chromium (Debian's chromium), axe-core included.
	@command -v chromium >/dev/null || command -v chromium-browser >/dev/null || { echo "chromium not found: the browser tests need it (apt-get install chromium)"; exit 1; }
	@mkdir -p test-output
	KUBEBUILDER_ASSETS=$(K8SBIN) $(GOTEST) $(TEST_BROWSER_PKGS)

# test-installers renders what the install tests read: dist/install.yaml
# (IMG) and dist/install-all.yaml (every component, a test image).
.PHONY: test-installers
test-installers: build-installer
	$(MAKE) --no-print-directory build-installer COMPONENTS="prometheus network-policy" INSTALLER=dist/install-all.yaml IMG=registry.example.com/routeopt:v0.0.0-test

.PHONY: test-race
test-race: manifests generate envtest vet test-installers build-static portal-deps ## Run every test as make test does, under the race detector.
	@mkdir -p test-output/race
	KUBEBUILDER_ASSETS=$(K8SBIN) go test -race -timeout $(RACE_TIMEOUT) -artifacts -outputdir=$(CURDIR)/test-output/race $(GOTEST_FLAGS) ./...

.PHONY: fuzz
fuzz: ## Run each fuzz target for FUZZTIME (30s), one after another; print executions and crashes, fail on a crash.
	FUZZTIME=$(FUZZTIME) FUZZ='$(FUZZ)' hack/fuzz.sh

# Soak knobs: SOAK_LOAD is each phase's load; SOAK_TIMEOUT bounds the whole run.
SOAK_LOAD ?= 150s
SOAK_TIMEOUT ?= 20m

.PHONY: soak
soak: manifests generate envtest build-installer ## Bounded reliability run with SIGKILLs (Job runner, then dev mode); report in test-output/soak-report.md.
	@mkdir -p test-output
	KUBEBUILDER_ASSETS=$(K8SBIN) go test -tags soak -run '^TestSoak$$' -count=1 -v -timeout $(SOAK_TIMEOUT) ./test/e2e/ -args -soak.load=$(SOAK_LOAD)

.PHONY: ci
ci: verify lint test test-race ## What CI runs.

##@ Build

.PHONY: build
build: manifests generate $(PORTAL_PREREQ) ## Build bin/routeopt (the portal first, when npm is on PATH).
	go build -o $(LOCALBIN)/routeopt ./cmd/routeopt

.PHONY: run
run: $(PORTAL_PREREQ) build envtest ## Dev mode: local control plane, controller and REST API on 127.0.0.1:8080.
	$(LOCALBIN)/routeopt dev $(RUN_ARGS)

.PHONY: build-static
build-static: manifests generate $(PORTAL_PREREQ) ## Build bin/routeopt-static as the Dockerfile does; fail unless statically linked.
	CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o $(LOCALBIN)/routeopt-static ./cmd/routeopt
	go run ./hack/checkstatic $(LOCALBIN)/routeopt-static

.PHONY: docker-build
docker-build: ## Build the container image IMG (needs a container engine).
	$(CONTAINER_TOOL) build -t $(IMG) .

.PHONY: docker-push
docker-push: ## Push the container image IMG.
	$(CONTAINER_TOOL) push $(IMG)

##@ Deployment

.PHONY: install
install: manifests $(KUSTOMIZE) ## Install the CRDs into the cluster of the current kubeconfig.
	$(KUSTOMIZE) build config/crd | $(KUBECTL) apply --server-side -f -

.PHONY: uninstall
uninstall: manifests $(KUSTOMIZE) ## Remove the CRDs.
	$(KUSTOMIZE) build config/crd | $(KUBECTL) delete --ignore-not-found -f -

# KUBECTL talks to your cluster (make kubectl builds one into bin/k8s).
KUBECTL ?= kubectl

# COMPONENTS adds optional parts of config/ to the install: prometheus
# (a ServiceMonitor), network-policy (set config/network-policy/settings.yaml).
COMPONENTS ?=

# INSTALLER is the file build-installer writes.
INSTALLER ?= dist/install.yaml

.PHONY: build-installer
build-installer: manifests $(KUSTOMIZE) ## Render $(INSTALLER) with image IMG (and COMPONENTS).
	@rm -rf dist/_config && mkdir -p dist && cp -r config dist/_config
	@cd dist/_config/default && $(KUSTOMIZE) edit set image routeopt=$(IMG) \
		$(foreach c,$(COMPONENTS),&& $(KUSTOMIZE) edit add component ../$(c))
	$(KUSTOMIZE) build dist/_config/default > $(INSTALLER)
	@rm -rf dist/_config

.PHONY: deploy
deploy: build-installer ## Deploy the operator and REST API with image IMG (every image, the solver's too).
	$(KUBECTL) apply --server-side -f dist/install.yaml

.PHONY: undeploy
undeploy: build-installer ## Remove the operator (CRDs, and so every optimization, included).
	$(KUBECTL) delete --ignore-not-found -f dist/install.yaml

##@ Tools

$(LOCALBIN):
	mkdir -p $(LOCALBIN)

$(CONTROLLER_GEN): | $(LOCALBIN)
	$(call go-install-tool,$(CONTROLLER_GEN),sigs.k8s.io/controller-tools/cmd/controller-gen,$(CONTROLLER_GEN_VERSION))

$(KUSTOMIZE): | $(LOCALBIN)
	$(call go-install-tool,$(KUSTOMIZE),sigs.k8s.io/kustomize/kustomize/v5,$(KUSTOMIZE_VERSION))

$(GOLANGCI_LINT): | $(LOCALBIN)
	$(call go-install-tool,$(GOLANGCI_LINT),github.com/golangci/golangci-lint/v2/cmd/golangci-lint,$(GOLANGCI_LINT_VERSION))

$(KUBE_API_LINTER): | $(LOCALBIN)
	$(call go-install-tool,$(KUBE_API_LINTER),sigs.k8s.io/kube-api-linter/cmd/golangci-lint-kube-api-linter,$(KUBE_API_LINTER_VERSION))

$(DEADCODE): | $(LOCALBIN)
	$(call go-install-tool,$(DEADCODE),golang.org/x/tools/cmd/deadcode,$(DEADCODE_VERSION))

$(DOCKERFILE_LINT): hack/dockerfile-lint/go.mod hack/dockerfile-lint/go.sum hack/dockerfile-lint/main.go | $(LOCALBIN)
	cd hack/dockerfile-lint && CGO_ENABLED=0 go build -trimpath -o $(DOCKERFILE_LINT) .

# go-install-tool installs package $(2) at version $(3) as $(1).
define go-install-tool
@set -e; pkg=$(2)@$(3); echo "Installing $${pkg}"; \
tmp=$$(mktemp -d); GOBIN=$$tmp go install $${pkg}; mv $$tmp/$$(basename $$(echo $(2) | sed 's,/v[0-9]*$$,,')) $(1); rm -rf $$tmp
endef
