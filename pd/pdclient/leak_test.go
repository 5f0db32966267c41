package pdclient_test

import (
	"testing"

	"github.com/shoaldb/shoal/pd/server/pdtest"
)

func TestMain(m *testing.M) { pdtest.RunWithLeakCheck(m) }
