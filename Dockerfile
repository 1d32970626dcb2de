# A pinned fio image for storbench's Kubernetes targets (--image), for
# air-gapped clusters or to fix the fio version across runs. Multi-arch:
#   docker buildx build --platform linux/amd64,linux/arm64,linux/arm/v7 \
#     -t registry.example.com/storbench-fio:3.37 --push .
#   storbench run --target k8s:longhorn --image registry.example.com/storbench-fio:3.37
# storbench needs only sh, fio (with libaio) and coreutils-like basics (kill,
# rm, cat, sleep) in the image; it runs the container's command itself.
ARG ALPINE_VERSION=3.20

FROM alpine:${ALPINE_VERSION} AS build
ARG FIO_VERSION=3.37
RUN apk add --no-cache build-base linux-headers libaio-dev zlib-dev curl
WORKDIR /src
RUN curl -fsSL "https://github.com/axboe/fio/archive/refs/tags/fio-${FIO_VERSION}.tar.gz" | tar -xz --strip-components=1 \
 && ./configure --prefix=/usr --disable-native \
 && make -j"$(nproc)" \
 && make install DESTDIR=/out \
 && /out/usr/bin/fio --version

FROM alpine:${ALPINE_VERSION}
RUN apk add --no-cache libaio zlib
COPY --from=build /out/usr/bin/fio /usr/bin/fio
LABEL org.opencontainers.image.title="storbench-fio" \
      org.opencontainers.image.description="fio for storbench Kubernetes targets" \
      org.opencontainers.image.source="https://github.com/storbench/storbench"
WORKDIR /storbench
CMD ["sh", "-c", "echo storbench fio image; exec sleep 2147483647"]
