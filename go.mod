module github.com/shoaldb/shoal

go 1.26

require github.com/pingcap/tidb/pkg/parser v0.0.0-20260418072757-ce92298d1124

require (
	github.com/coreos/go-semver v0.3.1 // indirect
	github.com/pingcap/errors v0.11.5-0.20250523034308-74f78ae071ee // indirect
	github.com/stretchr/testify v1.9.0 // indirect
	go.uber.org/atomic v1.11.0 // indirect
)
