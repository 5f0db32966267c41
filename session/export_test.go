package session

import (
	"github.com/shoaldb/shoal/kv"
	"github.com/shoaldb/shoal/sql/catalog"
)

// CatalogOf and StoreOf expose a backend's catalog and storage to the
// datadriven tests (schema states, raw index entries).
func CatalogOf(b *Backend) *catalog.Catalog { return b.catalog }
func StoreOf(b *Backend) kv.Storage         { return b.store }

// TextDepth and MaxTextDepth expose the pre-parse nesting estimate.
var TextDepth = textDepth

const MaxTextDepth = maxTextDepth
