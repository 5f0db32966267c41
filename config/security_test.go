package config

import "testing"

func TestCheckRootExposure(t *testing.T) {
	for _, c := range []struct {
		host, pass string
		allow, ok  bool
	}{
		{"127.0.0.1", "", false, true},
		{"127.0.0.2", "", false, true},
		{"::1", "", false, true},
		{"[::1]", "", false, true},
		{"localhost", "", false, true},
		{"0.0.0.0", "", false, false},
		{"::", "", false, false},
		{"10.1.2.3", "", false, false},
		{"0.0.0.0", "secret", false, true},
		{"0.0.0.0", "", true, true},
	} {
		err := CheckRootExposure(c.host, c.pass, c.allow)
		if (err == nil) != c.ok {
			t.Errorf("CheckRootExposure(%q, %q, %v) = %v", c.host, c.pass, c.allow, err)
		}
	}
}

func TestSecurityValidate(t *testing.T) {
	if err := (Security{SSLCert: "/x"}).Validate(); err == nil {
		t.Fatal("ssl-cert without ssl-key accepted")
	}
	if err := (Security{SSLCert: "/nonexistent/c.pem", SSLKey: "/nonexistent/k.pem"}).Validate(); err == nil {
		t.Fatal("missing files accepted")
	}
	if err := (Security{}).Validate(); err != nil {
		t.Fatal(err)
	}
}
