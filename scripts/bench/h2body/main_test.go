package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"formgate.bench/payload"
)

// The file holds exactly the body the sink expects: prefix, the seed's content, suffix.
func TestWriteMatchesThePayload(t *testing.T) {
	for _, size := range []int64{0, 4096, 3*payload.BlockSize + 5} {
		path := filepath.Join(t.TempDir(), "body")
		if err := write(path, 77, size); err != nil {
			t.Fatal(err)
		}
		body, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if int64(len(body)) != payload.BodyLength(size) {
			t.Fatalf("size %d: %d bytes, want %d", size, len(body), payload.BodyLength(size))
		}
		content := body[len(payload.Prefix) : int64(len(payload.Prefix))+size]
		if !bytes.HasPrefix(body, payload.Prefix) || !bytes.HasSuffix(body, payload.Suffix) {
			t.Fatalf("size %d: prefix or suffix differs", size)
		}
		if at := payload.Check(content, 77, 0); at != -1 {
			t.Fatalf("size %d: content differs at %d", size, at)
		}
		if size > 0 && payload.Check(content, 78, 0) == -1 {
			t.Fatalf("size %d: the content does not depend on the seed", size)
		}
	}
}
