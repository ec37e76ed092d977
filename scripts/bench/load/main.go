// Command load is the benchmark's load generator: HTTP/1.1 uploads over raw TCP connections,
// the bodies described by package payload, each request carrying the X-Bench header that
// tells the sink what it must receive.
//
// With -duration 0 each of -conns connections sends one upload of -size bytes, all at once
// (the large cases). With -duration D each connection sends uploads back to back, keep-alive,
// for D (the small case); every request has its own seed. It prints one JSON line: requests,
// ok, failed (any status but 200, or an I/O error), the first errors, seconds, latency
// percentiles, and its own CPU seconds over the timed window.
package main

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"formgate.bench/payload"
)

// smallSeeds is how many distinct seeds the small case cycles through (their digests are
// computed before the timed window).
const smallSeeds = 4096

type options struct {
	addr, path   string
	mode         payload.Mode
	conns        int
	size         int64
	duration     time.Duration
	seed         uint64
	shaCache     string
	corruptEvery int64
	oneSeed      bool
	header       string // one extra request header line ("Name: value"), e.g. a bearer token
}

type result struct {
	Requests   int64    `json:"requests"`
	OK         int64    `json:"ok"`
	Failed     int64    `json:"failed"`
	Errors     []string `json:"errors"`
	Seconds    float64  `json:"seconds"`
	FileBytes  int64    `json:"file_bytes"`
	P50ms      float64  `json:"p50_ms"`
	P99ms      float64  `json:"p99_ms"`
	CPUSeconds float64  `json:"cpu_seconds"`
	Reconnects int64    `json:"reconnects"`
	Corrupted  int64    `json:"corrupted"`
}

type generator struct {
	options
	digests    []string          // per small seed, digests mode
	large      map[uint64]string // per large seed, digests mode
	counter    atomic.Int64
	ok, failed atomic.Int64
	reconnects atomic.Int64
	corrupted  atomic.Int64
	mutex      sync.Mutex
	errors     []string
	latencies  []uint32 // microseconds
}

func main() {
	var o options
	var mode string
	flag.StringVar(&o.addr, "addr", "", "host:port to send to")
	flag.StringVar(&o.path, "path", "/upload", "request path")
	flag.StringVar(&mode, "mode", "raw", "what the sink must receive: raw, reencode, rules, digests")
	flag.IntVar(&o.conns, "conns", 1, "connections")
	flag.Int64Var(&o.size, "size", 4096, "file bytes per upload")
	flag.DurationVar(&o.duration, "duration", 0, "keep sending for this long (0: one upload per connection)")
	flag.Uint64Var(&o.seed, "seed", 1, "first seed")
	flag.StringVar(&o.shaCache, "sha-cache", "", "directory caching the SHA-256 of large files (digests mode)")
	flag.Int64Var(&o.corruptEvery, "corrupt-every", 0, "flip one file byte in every Nth upload, after hashing (a test of the sink)")
	flag.BoolVar(&o.oneSeed, "one-seed", false, "every connection sends the file of -seed (large cases: one digest to compute)")
	flag.StringVar(&o.header, "header", "", "an extra request header line, \"Name: value\" (the JWT case's bearer token)")
	flag.Parse()
	o.mode = payload.Mode(mode)
	if _, err := payload.ParseSpec(payload.Spec{Mode: o.mode, Size: o.size}.String()); err != nil || o.addr == "" || o.conns < 1 {
		log.Fatalf("load: bad arguments (%v)", err)
	}
	g := &generator{options: o, large: map[uint64]string{}}
	if o.mode == payload.Digests {
		g.prepareDigests()
	}
	before := cpuSeconds()
	started := time.Now()
	var wait sync.WaitGroup
	for i := 0; i < o.conns; i++ {
		wait.Add(1)
		go func(index int) {
			defer wait.Done()
			if o.duration == 0 && o.oneSeed {
				g.single(o.seed)
			} else if o.duration == 0 {
				g.single(o.seed + uint64(index))
			} else {
				g.loop(started.Add(o.duration))
			}
		}(i)
	}
	wait.Wait()
	elapsed := time.Since(started).Seconds()
	out := result{
		Requests: g.counter.Load(), OK: g.ok.Load(), Failed: g.failed.Load(), Errors: g.errors,
		Seconds: elapsed, FileBytes: g.ok.Load() * o.size, CPUSeconds: cpuSeconds() - before,
		Reconnects: g.reconnects.Load(), Corrupted: g.corrupted.Load(),
	}
	out.P50ms, out.P99ms = percentile(g.latencies, 0.50), percentile(g.latencies, 0.99)
	json.NewEncoder(os.Stdout).Encode(out)
	if out.Failed > 0 {
		os.Exit(1)
	}
}

func cpuSeconds() float64 {
	var usage syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &usage)
	return float64(usage.Utime.Nano()+usage.Stime.Nano()) / 1e9
}

func percentile(values []uint32, q float64) float64 {
	if len(values) == 0 {
		return 0
	}
	sort.Slice(values, func(i, j int) bool { return values[i] < values[j] })
	return float64(values[int(q*float64(len(values)-1))]) / 1000
}

func (g *generator) fail(err error) {
	g.failed.Add(1)
	g.mutex.Lock()
	if len(g.errors) < 10 {
		g.errors = append(g.errors, err.Error())
	}
	g.mutex.Unlock()
}

// corrupt says whether this upload (numbered from 1) gets a flipped byte.
func (g *generator) corrupt(number int64) bool {
	if g.corruptEvery > 0 && number%g.corruptEvery == 0 {
		g.corrupted.Add(1)
		return true
	}
	return false
}

// appendHead appends the request head and the body's prefix to dst.
func (g *generator) appendHead(dst []byte, spec payload.Spec, digest string) []byte {
	dst = append(dst, "POST "...)
	dst = append(dst, g.path...)
	dst = append(dst, " HTTP/1.1\r\nHost: bench\r\nContent-Type: "+payload.ContentType+"\r\nContent-Length: "...)
	dst = strconv.AppendInt(dst, payload.BodyLength(spec.Size), 10)
	dst = append(dst, "\r\n"+payload.SpecHeader+": "...)
	dst = append(dst, spec.Mode...)
	dst = append(dst, ' ')
	dst = strconv.AppendUint(dst, spec.Seed, 10)
	dst = append(dst, ' ')
	dst = strconv.AppendInt(dst, spec.Size, 10)
	dst = append(dst, "\r\n"...)
	if g.header != "" {
		dst = append(dst, g.header...)
		dst = append(dst, "\r\n"...)
	}
	if digest != "" {
		dst = append(dst, payload.DigestHeader+": "...)
		dst = append(dst, digest...)
		dst = append(dst, "\r\n"...)
	}
	dst = append(dst, "\r\n"...)
	return append(dst, payload.Prefix...)
}

// single sends one large upload on its own connection.
func (g *generator) single(seed uint64) {
	number := g.counter.Add(1)
	spec := payload.Spec{Mode: g.mode, Seed: seed, Size: g.size}
	conn, err := net.Dial("tcp", g.addr)
	if err != nil {
		g.fail(err)
		return
	}
	defer conn.Close()
	sent := time.Now()
	flip := int64(-1)
	if g.corrupt(number) {
		flip = g.size / 2
	}
	writeErr := g.sendLarge(conn, spec, g.large[seed], flip)
	status, _, body, err := readResponse(bufio.NewReaderSize(conn, 16<<10))
	g.record(time.Since(sent))
	switch {
	case err != nil && writeErr != nil:
		g.fail(fmt.Errorf("seed %d: sending: %v", seed, writeErr))
	case err != nil:
		g.fail(fmt.Errorf("seed %d: reading the response: %v", seed, err))
	case status != 200:
		g.fail(fmt.Errorf("seed %d: status %d: %s", seed, status, strings.TrimSpace(body)))
	default:
		g.ok.Add(1)
	}
}

func (g *generator) sendLarge(conn net.Conn, spec payload.Spec, digest string, flip int64) error {
	if _, err := conn.Write(g.appendHead(nil, spec, digest)); err != nil {
		return err
	}
	buffer := payload.Block()
	for offset := int64(0); offset < spec.Size; offset += payload.BlockSize {
		n := spec.Size - offset
		if n > payload.BlockSize {
			n = payload.BlockSize
		}
		chunk := buffer[:n]
		payload.Fill(chunk, spec.Seed, offset)
		hit := flip >= offset && flip < offset+n
		if hit {
			chunk[flip-offset] ^= 0x01
		}
		_, err := conn.Write(chunk)
		if hit {
			chunk[flip-offset] ^= 0x01
		}
		if err != nil {
			return err
		}
	}
	_, err := conn.Write(payload.Suffix)
	return err
}

// loop sends small uploads back to back on one keep-alive connection until the deadline,
// reconnecting when the server closes.
func (g *generator) loop(deadline time.Time) {
	var conn net.Conn
	var reader *bufio.Reader
	request := make([]byte, 0, 1024+g.size+int64(len(payload.Prefix)+len(payload.Suffix)))
	latencies := make([]uint32, 0, 1<<16)
	defer func() {
		if conn != nil {
			conn.Close()
		}
		g.mutex.Lock()
		g.latencies = append(g.latencies, latencies...)
		g.mutex.Unlock()
	}()
	for time.Now().Before(deadline) {
		if conn == nil {
			var err error
			if conn, err = net.Dial("tcp", g.addr); err != nil {
				g.fail(err)
				return
			}
			reader = bufio.NewReaderSize(conn, 16<<10)
		}
		number := g.counter.Add(1)
		seed := g.seed + uint64(number%smallSeeds)
		spec := payload.Spec{Mode: g.mode, Seed: seed, Size: g.size}
		digest := ""
		if g.digests != nil {
			digest = g.digests[number%smallSeeds]
		}
		request = g.appendHead(request[:0], spec, digest)
		start := len(request)
		request = request[:start+int(g.size)]
		payload.FillAny(request[start:], seed, 0)
		if g.corrupt(number) {
			request[start+int(g.size)/2] ^= 0x01
		}
		request = append(request, payload.Suffix...)
		sent := time.Now()
		if _, err := conn.Write(request); err != nil {
			g.fail(fmt.Errorf("seed %d: sending: %v", seed, err))
			conn.Close()
			conn = nil
			continue
		}
		status, closing, body, err := readResponse(reader)
		latencies = append(latencies, uint32(time.Since(sent).Microseconds()))
		switch {
		case err != nil:
			g.fail(fmt.Errorf("seed %d: reading the response: %v", seed, err))
			closing = true
		case status != 200:
			g.fail(fmt.Errorf("seed %d: status %d: %s", seed, status, strings.TrimSpace(body)))
		default:
			g.ok.Add(1)
		}
		if closing {
			conn.Close()
			conn = nil
			g.reconnects.Add(1)
		}
	}
}

func (g *generator) record(latency time.Duration) {
	g.mutex.Lock()
	g.latencies = append(g.latencies, uint32(latency.Microseconds()))
	g.mutex.Unlock()
}

// prepareDigests computes the SHA-256 of every file the run will send, before the timed window.
func (g *generator) prepareDigests() {
	if g.duration == 0 {
		for i := 0; i < g.conns; i++ {
			seed := g.seed
			if !g.oneSeed {
				seed += uint64(i)
			}
			g.large[seed] = g.largeDigest(seed)
		}
		return
	}
	content := make([]byte, g.size)
	g.digests = make([]string, smallSeeds)
	for i := range g.digests {
		payload.FillAny(content, g.seed+uint64(i), 0)
		sum := sha256.Sum256(content)
		g.digests[i] = hex.EncodeToString(sum[:])
	}
}

// largeDigest is the SHA-256 of a large file, from the cache directory when it is there.
func (g *generator) largeDigest(seed uint64) string {
	path := filepath.Join(g.shaCache, fmt.Sprintf("%d-%d.sha256", seed, g.size))
	if g.shaCache != "" {
		if cached, err := os.ReadFile(path); err == nil && len(cached) == 64 {
			return string(cached)
		}
	}
	hash := sha256.New()
	buffer := payload.Block()
	for offset := int64(0); offset < g.size; offset += payload.BlockSize {
		n := g.size - offset
		if n > payload.BlockSize {
			n = payload.BlockSize
		}
		payload.Fill(buffer[:n], seed, offset)
		hash.Write(buffer[:n])
	}
	digest := hex.EncodeToString(hash.Sum(nil))
	if g.shaCache != "" {
		os.MkdirAll(g.shaCache, 0o755)
		os.WriteFile(path, []byte(digest), 0o644)
	}
	return digest
}

// readResponse reads one response: its status, whether the connection closes after it, and
// the first bytes of its body.
func readResponse(reader *bufio.Reader) (int, bool, string, error) {
	line, err := reader.ReadSlice('\n')
	if err != nil {
		return 0, true, "", err
	}
	fields := strings.SplitN(strings.TrimRight(string(line), "\r\n"), " ", 3)
	if len(fields) < 2 || !strings.HasPrefix(fields[0], "HTTP/1.") {
		return 0, true, "", fmt.Errorf("bad status line %q", line)
	}
	status, err := strconv.Atoi(fields[1])
	if err != nil {
		return 0, true, "", fmt.Errorf("bad status line %q", line)
	}
	closing := fields[0] == "HTTP/1.0"
	length, chunked := int64(-1), false
	for {
		line, err := reader.ReadSlice('\n')
		if err != nil {
			return status, true, "", err
		}
		text := strings.TrimRight(string(line), "\r\n")
		if text == "" {
			break
		}
		name, value, found := strings.Cut(text, ":")
		if !found {
			return status, true, "", fmt.Errorf("bad header line %q", text)
		}
		value = strings.TrimSpace(value)
		switch strings.ToLower(name) {
		case "content-length":
			if length, err = strconv.ParseInt(value, 10, 64); err != nil {
				return status, true, "", fmt.Errorf("bad Content-Length %q", value)
			}
		case "transfer-encoding":
			chunked = strings.EqualFold(value, "chunked")
		case "connection":
			closing = strings.EqualFold(value, "close")
		}
	}
	var body bytes.Buffer
	keep := &limitedBuffer{buffer: &body, left: 512}
	switch {
	case chunked:
		err = readChunked(reader, keep)
	case length >= 0:
		_, err = io.CopyN(keep, reader, length)
	default:
		_, err = io.Copy(keep, reader)
		closing = true
	}
	return status, closing, body.String(), err
}

func readChunked(reader *bufio.Reader, out io.Writer) error {
	for {
		line, err := reader.ReadString('\n')
		if err != nil {
			return err
		}
		sizeText, _, _ := strings.Cut(strings.TrimSpace(line), ";")
		size, err := strconv.ParseInt(sizeText, 16, 64)
		if err != nil {
			return fmt.Errorf("bad chunk size %q", line)
		}
		if size == 0 {
			for {
				trailer, err := reader.ReadString('\n')
				if err != nil {
					return err
				}
				if strings.TrimSpace(trailer) == "" {
					return nil
				}
			}
		}
		if _, err := io.CopyN(out, reader, size); err != nil {
			return err
		}
		if crlf, err := reader.ReadString('\n'); err != nil || strings.TrimSpace(crlf) != "" {
			return errors.New("chunk without CRLF")
		}
	}
}

// limitedBuffer keeps the first bytes written to it and counts the rest as written.
type limitedBuffer struct {
	buffer *bytes.Buffer
	left   int
}

func (l *limitedBuffer) Write(p []byte) (int, error) {
	keep := len(p)
	if keep > l.left {
		keep = l.left
	}
	l.buffer.Write(p[:keep])
	l.left -= keep
	return len(p), nil
}
