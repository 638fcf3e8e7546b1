FROM golang:1.26 as builder
MAINTAINER someone@example.com
ENV GOFLAGS -mod=mod
ENV PATH=$PATH:$GOBINX
WORKDIR src
from gcr.io/distroless/static:nonroot${TAG_SUFFIX}
CMD /routeopt
