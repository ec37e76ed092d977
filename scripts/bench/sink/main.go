// Command sink is the benchmark's upstream: it verifies every request it receives against
// the payload its X-Bench header names and counts the outcome. Every body is parsed with
// mime/multipart, as an upload server would, whatever the mode:
//
//	raw       the client's boundary, and every body byte equal to the client's body
//	reencode  a boundary other than the client's, with exactly the client's fields and file
//	          (name, file name, type, every byte, the size)
//	rules     FormGate's rules route: "via"=formgate injected, "upload" renamed "file",
//	          file name file-<uuid>.png, type image/png, every file byte
//	digests   rules, plus "file.sha256" equal to the X-Bench-Sha256 the generator sent
//
// A request that passes gets 200 "ok"; one that does not gets 422 with the reason, is
// counted as a mismatch and logged (the first 20). A request without a readable X-Bench
// header is counted as unverified (400). GET /_bench/stats answers the counters as JSON.
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"mime"
	"mime/multipart"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"formgate.bench/payload"
)

type counters struct {
	Requests, Verified, Mismatches, Unverified, FileBytes, BodyBytes atomic.Int64
}

var (
	stats  counters
	logged atomic.Int64
	// Kept across garbage collections (a sync.Pool is emptied by each one, and reallocating
	// and zeroing these buffers then cost more CPU than verifying 4 KiB requests).
	buffers = make(chan []byte, 1024)
	readers = make(chan *bufio.Reader, 1024)
)

func main() {
	listen := flag.String("listen", "127.0.0.1:0", "address to listen on")
	flag.Parse()
	listener, err := net.Listen("tcp", *listen)
	if err != nil {
		log.Fatal(err)
	}
	// The port on stdout first, so the caller can use 127.0.0.1:0.
	fmt.Println(listener.Addr().String())
	server := &http.Server{Handler: http.HandlerFunc(serve), ReadHeaderTimeout: time.Minute, IdleTimeout: 10 * time.Minute}
	log.Fatal(server.Serve(listener))
}

func serve(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/_bench/stats" {
		writeStats(w)
		return
	}
	stats.Requests.Add(1)
	spec, err := payload.ParseSpec(r.Header.Get(payload.SpecHeader))
	if err != nil {
		stats.Unverified.Add(1)
		report(w, http.StatusBadRequest, r, err)
		return
	}
	received, err := verify(r, spec)
	stats.BodyBytes.Add(received)
	if err != nil {
		stats.Mismatches.Add(1)
		report(w, http.StatusUnprocessableEntity, r, err)
		return
	}
	stats.Verified.Add(1)
	stats.FileBytes.Add(spec.Size)
	w.Header().Set("Content-Length", "3")
	w.Write([]byte("ok\n"))
}

func report(w http.ResponseWriter, status int, r *http.Request, err error) {
	if logged.Add(1) <= 20 {
		log.Printf("sink: MISMATCH %s %s (%s: %q): %v", r.Method, r.URL.Path, payload.SpecHeader, r.Header.Get(payload.SpecHeader), err)
	}
	http.Error(w, "bench sink: "+err.Error(), status)
}

func writeStats(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]int64{
		"requests": stats.Requests.Load(), "verified": stats.Verified.Load(),
		"mismatches": stats.Mismatches.Load(), "unverified": stats.Unverified.Load(),
		"file_bytes": stats.FileBytes.Load(), "body_bytes": stats.BodyBytes.Load(),
	})
}

// verify parses the body as multipart/form-data under its own boundary, as an upload server
// would, and compares each part with what the mode expects. In raw mode the boundary must be
// the client's and every body byte is compared as well, on the way into the parser, so the
// sink does the same work whichever candidate sent the request.
func verify(r *http.Request, spec payload.Spec) (int64, error) {
	contentType := r.Header.Get("Content-Type")
	mediaType, params, err := mime.ParseMediaType(contentType)
	if err != nil || mediaType != "multipart/form-data" || params["boundary"] == "" {
		return 0, fmt.Errorf("Content-Type %q is not multipart/form-data with a boundary", contentType)
	}
	raw := spec.Mode == payload.Raw
	if raw && contentType != payload.ContentType {
		return 0, fmt.Errorf("Content-Type %q, want the client's %q", contentType, payload.ContentType)
	}
	if !raw && params["boundary"] == payload.Boundary {
		return 0, errors.New("the body kept the client's boundary (not re-encoded)")
	}
	body := &checkingReader{reader: r.Body, raw: raw, seed: spec.Seed, length: payload.BodyLength(spec.Size),
		prefix: int64(len(payload.Prefix)), contentEnd: int64(len(payload.Prefix)) + spec.Size}
	err = verifyParts(body, params["boundary"], spec, r.Header.Get(payload.DigestHeader))
	if err == nil {
		_, err = io.Copy(io.Discard, body)
	}
	switch {
	case body.mismatch != nil:
		return body.n, body.mismatch
	case err != nil:
		return body.n, err
	case raw && body.n != body.length:
		return body.n, fmt.Errorf("body of %d bytes, the client sent %d", body.n, body.length)
	}
	return body.n, nil
}

func verifyParts(body io.Reader, boundary string, spec payload.Spec, digest string) error {
	var buffered *bufio.Reader
	select {
	case buffered = <-readers:
		buffered.Reset(body)
	default:
		buffered = bufio.NewReaderSize(body, 256<<10)
	}
	defer func() {
		buffered.Reset(nil)
		select {
		case readers <- buffered:
		default:
		}
	}()
	reader := multipart.NewReader(buffered, boundary)
	want := map[string]string{"title": payload.Title}
	fileField := "upload"
	if spec.Mode == payload.Rules || spec.Mode == payload.Digests {
		want["via"] = "formgate"
		fileField = "file"
	}
	if spec.Mode == payload.Digests {
		if len(digest) != 64 {
			return fmt.Errorf("digests mode without a %s header", payload.DigestHeader)
		}
		want["file.sha256"] = digest
	}
	got := map[string]string{}
	files := 0
	for {
		part, err := reader.NextRawPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("multipart: %v", err)
		}
		name := part.FormName()
		if part.FileName() != "" {
			files++
			if err := verifyFile(part, spec, name, fileField); err != nil {
				return err
			}
			continue
		}
		value, err := io.ReadAll(io.LimitReader(part, 1<<16))
		if err != nil {
			return fmt.Errorf("field %q: %v", name, err)
		}
		if _, twice := got[name]; twice {
			return fmt.Errorf("field %q arrived twice", name)
		}
		got[name] = string(value)
	}
	if files != 1 {
		return fmt.Errorf("%d file parts, want 1", files)
	}
	for name, value := range want {
		if got[name] != value {
			return fmt.Errorf("field %q = %q, want %q", name, got[name], value)
		}
	}
	for name := range got {
		if _, expected := want[name]; !expected {
			return fmt.Errorf("unexpected field %q", name)
		}
	}
	return nil
}

// isRenamed says whether a file name is what the rules route's "{field}-{uuid}{ext}" makes of
// the bench's upload: file-<8-4-4-4-12 hex digits>.png.
func isRenamed(name string) bool {
	uuid := strings.TrimSuffix(strings.TrimPrefix(name, "file-"), ".png")
	if len(uuid) != 36 || len(name) != len("file-.png")+36 {
		return false
	}
	for i, c := range uuid {
		dash := i == 8 || i == 13 || i == 18 || i == 23
		hex := (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
		if dash != (c == '-') || (!dash && !hex) {
			return false
		}
	}
	return true
}

// checkingReader counts the body bytes and, in raw mode, compares each with the client's body
// (prefix, content, suffix); the first difference ends the body.
type checkingReader struct {
	reader             io.Reader
	raw                bool
	seed               uint64
	n, length          int64
	prefix, contentEnd int64
	mismatch           error
}

func (c *checkingReader) Read(p []byte) (int, error) {
	if c.mismatch != nil {
		return 0, c.mismatch
	}
	n, err := c.reader.Read(p)
	if c.raw && n > 0 {
		if c.n+int64(n) > c.length {
			c.mismatch = fmt.Errorf("body longer than the client's %d bytes", c.length)
		} else if bad := checkRaw(p[:n], c.n, c.prefix, c.contentEnd, c.seed); bad >= 0 {
			c.mismatch = fmt.Errorf("body byte %d differs from the client's (file byte %d)", bad, bad-c.prefix)
		}
	}
	c.n += int64(n)
	if c.mismatch != nil {
		return n, c.mismatch
	}
	return n, err
}

// checkRaw returns the body offset of the first byte of chunk (at body offset at) that
// differs from the client's body, or -1.
func checkRaw(chunk []byte, at, prefix, contentEnd int64, seed uint64) int64 {
	for len(chunk) > 0 {
		switch {
		case at < prefix:
			n := minInt64(int64(len(chunk)), prefix-at)
			for i := int64(0); i < n; i++ {
				if chunk[i] != payload.Prefix[at+i] {
					return at + i
				}
			}
			chunk, at = chunk[n:], at+n
		case at < contentEnd:
			n := minInt64(int64(len(chunk)), contentEnd-at)
			if bad := payload.Check(chunk[:n], seed, at-prefix); bad >= 0 {
				return prefix + bad
			}
			chunk, at = chunk[n:], at+n
		default:
			for i := range chunk {
				if chunk[i] != payload.Suffix[at-contentEnd+int64(i)] {
					return at + int64(i)
				}
			}
			return -1
		}
	}
	return -1
}

func verifyFile(part *multipart.Part, spec payload.Spec, name, field string) error {
	if name != field {
		return fmt.Errorf("file part named %q, want %q", name, field)
	}
	filename := part.FileName()
	if spec.Mode == payload.Raw || spec.Mode == payload.Reencode {
		if filename != payload.FileName {
			return fmt.Errorf("file name %q, want %q", filename, payload.FileName)
		}
	} else if !isRenamed(filename) {
		return fmt.Errorf("file name %q, want file-<uuid>.png", filename)
	}
	if got := part.Header.Get("Content-Type"); got != "image/png" {
		return fmt.Errorf("file Content-Type %q, want image/png", got)
	}
	var buffer []byte
	select {
	case buffer = <-buffers:
	default:
		buffer = make([]byte, 64<<10)
	}
	defer func() {
		select {
		case buffers <- buffer:
		default:
		}
	}()
	var at int64
	for {
		n, err := part.Read(buffer)
		if at+int64(n) > spec.Size {
			return fmt.Errorf("file longer than the client's %d bytes", spec.Size)
		}
		if n > 0 {
			if bad := payload.Check(buffer[:n], spec.Seed, at); bad >= 0 {
				return fmt.Errorf("file byte %d differs from the client's", bad)
			}
			at += int64(n)
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("reading the file at %d: %v", at, err)
		}
	}
	if at != spec.Size {
		return fmt.Errorf("file of %d bytes, the client sent %d", at, spec.Size)
	}
	return nil
}

func minInt64(a, b int64) int64 {
	if a < b {
		return a
	}
	return b
}
