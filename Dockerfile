# Build the routeopt binary (manager, REST API and solver in one).
FROM golang:1.26 AS builder
ARG TARGETOS
ARG TARGETARCH
WORKDIR /workspace
COPY go.mod go.sum ./
RUN go mod download
COPY api/ api/
COPY cmd/ cmd/
COPY config/crd/ config/crd/
COPY controllers/ controllers/
COPY solver/ solver/
COPY webserver/ webserver/
RUN CGO_ENABLED=0 GOOS=${TARGETOS:-linux} GOARCH=${TARGETARCH} go build -trimpath -ldflags="-s -w" -o routeopt ./cmd/routeopt

# distroless: no shell, runs as non-root; the same image serves the manager,
# the REST API and the solve Jobs.
FROM gcr.io/distroless/static:nonroot
WORKDIR /
COPY --from=builder /workspace/routeopt /routeopt
USER 65532:65532
ENTRYPOINT ["/routeopt"]
