# Regenerates the gRPC/protobuf code under proto/ from proto/*.proto.
# Needs protoc (Debian: protobuf-compiler) and the pinned Go plugins,
# installed by scripts/proto-tools.sh.
.PHONY: proto
proto:
	./scripts/proto-gen.sh
