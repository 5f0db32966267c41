package kvrpc

// MaxMessageSize is the largest request or response a store's gRPC
// service takes or sends by default (64 MiB); client and server must
// agree on it, so it lives in the contract.
const MaxMessageSize = 64 << 20
