package server

import (
	"errors"
	"strings"

	"github.com/shoaldb/shoal/security"
	"go.etcd.io/etcd/client/pkg/v3/transport"
	"go.etcd.io/etcd/server/v3/embed"
)

// applyTLS turns the embedded etcd's client and peer listeners into mutual
// TLS when p names a full identity: every URL becomes https, and both
// sides require a certificate signed by p.CA. PD's gRPC service rides on
// the client port, so it is covered too.
func applyTLS(ec *embed.Config, p security.Paths) error {
	if p.IsZero() {
		return nil
	}
	if p.CA == "" || p.Cert == "" || p.Key == "" {
		return errors.New("cluster TLS needs ssl-ca, ssl-cert and ssl-key")
	}
	info := transport.TLSInfo{CertFile: p.Cert, KeyFile: p.Key, TrustedCAFile: p.CA, ClientCertAuth: true}
	ec.ClientTLSInfo = info
	ec.PeerTLSInfo = info
	for i := range ec.ListenClientUrls {
		ec.ListenClientUrls[i].Scheme = "https"
	}
	for i := range ec.AdvertiseClientUrls {
		ec.AdvertiseClientUrls[i].Scheme = "https"
	}
	for i := range ec.ListenPeerUrls {
		ec.ListenPeerUrls[i].Scheme = "https"
	}
	for i := range ec.AdvertisePeerUrls {
		ec.AdvertisePeerUrls[i].Scheme = "https"
	}
	ec.InitialCluster = strings.ReplaceAll(ec.InitialCluster, "http://", "https://")
	return nil
}
