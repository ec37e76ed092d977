// Package payload defines the upload bodies the load generator sends and the sink verifies.
//
// A file's content is derived from a seed and needs no storage: it is cut into 64 KiB pages;
// page p starts with a 24-byte stamp (8 bytes of magic, the seed, p) and continues with the
// matching bytes of one fixed 1 MiB random block. Every page of every request differs, so a
// proxy that loses, repeats, reorders or mixes bytes between requests is caught, and both
// sides produce or compare content at memory speed (Go 1.19's SHA-256 runs at a few hundred
// MB/s: hashing every byte in the sink would make the sink the bottleneck). The first page
// begins with the PNG signature, so a sniffing proxy sees an image.
package payload

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand"
	"strconv"
	"strings"
)

const (
	// PageSize is the unit that carries a stamp.
	PageSize = 64 << 10
	// BlockSize is the size of the random block the pages are cut from.
	BlockSize = 1 << 20
	// Boundary is the client's multipart boundary.
	Boundary = "BenchBoundary-7MA4YWxkTrZu0gW-kq9"
	// ContentType is the client's request Content-Type.
	ContentType = "multipart/form-data; boundary=" + Boundary
	// SpecHeader carries the Spec of a request, so the sink knows what to expect.
	SpecHeader = "X-Bench"
	// DigestHeader carries the hex SHA-256 of the file (digests mode only).
	DigestHeader = "X-Bench-Sha256"
	// Title is the value of the "title" field every body carries.
	Title = "bench"
	// FileName is the client's file name.
	FileName  = "bench.png"
	stampSize = 24
)

var (
	block      = randomBlock()
	pngMagic   = []byte("\x89PNG\r\n\x1a\n")
	otherMagic = []byte("BENCHPG\n")
	// Prefix is everything before the file content.
	Prefix = []byte("--" + Boundary + "\r\nContent-Disposition: form-data; name=\"title\"\r\n\r\n" + Title +
		"\r\n--" + Boundary + "\r\nContent-Disposition: form-data; name=\"upload\"; filename=\"" + FileName +
		"\"\r\nContent-Type: image/png\r\n\r\n")
	// Suffix is everything after the file content.
	Suffix = []byte("\r\n--" + Boundary + "--\r\n")
)

func randomBlock() []byte {
	b := make([]byte, BlockSize)
	rand.New(rand.NewSource(1)).Read(b)
	if bytes.Contains(b, []byte(Boundary)) {
		panic("the random block contains the boundary")
	}
	return b
}

// Mode says what the sink must have received.
type Mode string

const (
	// Raw: the client's body, byte for byte (direct, nginx, a pass-through route).
	Raw Mode = "raw"
	// Reencode: the same fields and file under a new boundary.
	Reencode Mode = "reencode"
	// Rules: FormGate's rules route: "via"=formgate injected, "upload" renamed to "file",
	// file name file-<uuid>.png, sniffed type image/png.
	Rules Mode = "rules"
	// Digests: Rules plus a "file.sha256" field holding the file's SHA-256.
	Digests Mode = "digests"
)

// Spec names one request's body: what the sink must get, the seed and the file size.
type Spec struct {
	Mode Mode
	Seed uint64
	Size int64
}

// String is the SpecHeader value.
func (s Spec) String() string {
	return fmt.Sprintf("%s %d %d", s.Mode, s.Seed, s.Size)
}

// ParseSpec reads a SpecHeader value.
func ParseSpec(value string) (Spec, error) {
	fields := strings.Fields(value)
	if len(fields) != 3 {
		return Spec{}, fmt.Errorf("%s %q: want mode seed size", SpecHeader, value)
	}
	seed, err1 := strconv.ParseUint(fields[1], 10, 64)
	size, err2 := strconv.ParseInt(fields[2], 10, 64)
	mode := Mode(fields[0])
	if err1 != nil || err2 != nil || size < 0 || (mode != Raw && mode != Reencode && mode != Rules && mode != Digests) {
		return Spec{}, fmt.Errorf("%s %q: unreadable", SpecHeader, value)
	}
	return Spec{mode, seed, size}, nil
}

// BodyLength is the length of the client's body for a file of size bytes.
func BodyLength(size int64) int64 {
	return int64(len(Prefix)) + size + int64(len(Suffix))
}

func stamp(seed uint64, page int64) [stampSize]byte {
	var s [stampSize]byte
	if page == 0 {
		copy(s[:8], pngMagic)
	} else {
		copy(s[:8], otherMagic)
	}
	binary.LittleEndian.PutUint64(s[8:16], seed)
	binary.LittleEndian.PutUint64(s[16:24], uint64(page))
	return s
}

// Block returns a fresh copy of the random block: a generator's send buffer. Fill then only
// has to rewrite the stamps.
func Block() []byte {
	return append([]byte(nil), block...)
}

// Fill writes the content at [offset, offset+len(buffer)) of the file with this seed into a
// buffer that holds the block's bytes at the same block positions (from Block, with offset a
// multiple of BlockSize): only the stamps are written.
func Fill(buffer []byte, seed uint64, offset int64) {
	if offset%BlockSize != 0 || len(buffer) > BlockSize {
		panic("Fill: unaligned offset or buffer larger than the block")
	}
	for start := 0; start < len(buffer); start += PageSize {
		s := stamp(seed, (offset+int64(start))/PageSize)
		copy(buffer[start:], s[:])
	}
}

// FillAny writes the content at [offset, offset+len(buffer)) of the file with this seed,
// whatever the alignment (small files, and tests).
func FillAny(buffer []byte, seed uint64, offset int64) {
	for done := 0; done < len(buffer); {
		at := offset + int64(done)
		page, within := at/PageSize, int(at%PageSize)
		n := min(len(buffer)-done, PageSize-within)
		base := int(page%(BlockSize/PageSize)) * PageSize
		copy(buffer[done:done+n], block[base+within:base+within+n])
		if within < stampSize {
			s := stamp(seed, page)
			copy(buffer[done:done+n], s[within:])
		}
		done += n
	}
}

// Check compares chunk with the content at [offset, offset+len(chunk)) of the file with this
// seed. It returns the file offset of the first differing byte, or -1.
func Check(chunk []byte, seed uint64, offset int64) int64 {
	for done := 0; done < len(chunk); {
		at := offset + int64(done)
		page, within := at/PageSize, int(at%PageSize)
		n := min(len(chunk)-done, PageSize-within)
		part := chunk[done : done+n]
		if within < stampSize {
			s := stamp(seed, page)
			k := min(n, stampSize-within)
			if !bytes.Equal(part[:k], s[within:within+k]) {
				return at + int64(firstDifference(part[:k], s[within:within+k]))
			}
			part, within = part[k:], within+k
		}
		base := int(page%(BlockSize/PageSize)) * PageSize
		if !bytes.Equal(part, block[base+within:base+within+len(part)]) {
			return at + int64(n-len(part)) + int64(firstDifference(part, block[base+within:]))
		}
		done += n
	}
	return -1
}

func firstDifference(a, b []byte) int {
	for i := range a {
		if a[i] != b[i] {
			return i
		}
	}
	return len(a)
}

func min(a, b int) int {
	if a < b {
		return a
	}
	return b
}
