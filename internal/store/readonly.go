package store

import (
	"context"
	"fmt"
	"os"
)

// OpenReadOnly opens an existing database only to read it, whoever may
// write it meanwhile: nothing is created, migrated or written (every write
// returns a *ReadOnlyError), and reads see each commit of a writer in
// another process as it lands, waiting for it where SQLite must (the busy
// timeout) instead of failing with "database is locked". A database that
// does not exist yet is an error wrapping os.ErrNotExist. One older than
// this storbench is read as it is, without the newer indexes.
func OpenReadOnly(ctx context.Context, path string) (Store, error) {
	access, err := inspect(ctx, path)
	if err != nil {
		return nil, fmt.Errorf("opening database %s: %w", path, err)
	}
	switch access {
	case accessCreate:
		return nil, fmt.Errorf("opening database %s: %w", path, os.ErrNotExist)
	case accessReadWrite:
		access = accessReadOnly
	}
	s, err := openWith(ctx, path, access)
	if err != nil {
		return nil, fmt.Errorf("opening database %s: %w", path, err)
	}
	return s, nil
}
