package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"mime/multipart"
	"net/http/httptest"
	"net/textproto"
	"strings"
	"testing"

	"formgate.bench/payload"
)

func TestIsRenamed(t *testing.T) {
	for name, want := range map[string]bool{
		"file-3f2b8c1e-9a4d-4e2f-8b1c-0123456789ab.png":   true,
		"file-3F2B8C1E-9A4D-4E2F-8B1C-0123456789AB.png":   true,
		"file-3f2b8c1e-9a4d-4e2f-8b1c-0123456789ab.jpg":   false,
		"upload-3f2b8c1e-9a4d-4e2f-8b1c-0123456789ab.png": false,
		"file-3f2b8c1e9a4d-4e2f-8b1c-0123456789ab-.png":   false,
		"file-3f2b8c1e-9a4d-4e2f-8b1c-0123456789ag.png":   false,
		"bench.png": false,
	} {
		if isRenamed(name) != want {
			t.Errorf("isRenamed(%q) != %v", name, want)
		}
	}
}

// body returns the client's body for a file of size bytes with this seed.
func body(seed uint64, size int) []byte {
	content := make([]byte, size)
	payload.FillAny(content, seed, 0)
	return append(append(append([]byte(nil), payload.Prefix...), content...), payload.Suffix...)
}

func post(t *testing.T, spec payload.Spec, contentType string, data []byte, digest string) int {
	t.Helper()
	request := httptest.NewRequest("POST", "/upload", bytes.NewReader(data))
	request.Header.Set("Content-Type", contentType)
	request.Header.Set(payload.SpecHeader, spec.String())
	if digest != "" {
		request.Header.Set(payload.DigestHeader, digest)
	}
	recorder := httptest.NewRecorder()
	serve(recorder, request)
	return recorder.Code
}

// reencoded writes the fields and the file under a new boundary, as a rewriting proxy would.
func reencoded(seed uint64, size int, fields [][2]string, fileField, fileName string) ([]byte, string) {
	var out bytes.Buffer
	writer := multipart.NewWriter(&out)
	for _, field := range fields {
		writer.WriteField(field[0], field[1])
	}
	header := textproto.MIMEHeader{}
	header.Set("Content-Disposition", `form-data; name="`+fileField+`"; filename="`+fileName+`"`)
	header.Set("Content-Type", "image/png")
	part, _ := writer.CreatePart(header)
	content := make([]byte, size)
	payload.FillAny(content, seed, 0)
	part.Write(content)
	writer.Close()
	return out.Bytes(), writer.FormDataContentType()
}

func TestRawBodiesAreComparedByteForByte(t *testing.T) {
	spec := payload.Spec{Mode: payload.Raw, Seed: 7, Size: 200_000}
	data := body(7, 200_000)
	if code := post(t, spec, payload.ContentType, data, ""); code != 200 {
		t.Fatalf("a clean body got %d", code)
	}
	for _, at := range []int{3, len(payload.Prefix) + 100_000, len(data) - 2} {
		data[at] ^= 1
		if code := post(t, spec, payload.ContentType, data, ""); code != 422 {
			t.Fatalf("a body with byte %d flipped got %d", at, code)
		}
		data[at] ^= 1
	}
	if code := post(t, spec, payload.ContentType, data[:len(data)-1], ""); code != 422 {
		t.Fatalf("a short body got %d", code)
	}
	if code := post(t, payload.Spec{Mode: payload.Raw, Seed: 8, Size: 200_000}, payload.ContentType, data, ""); code != 422 {
		t.Fatalf("another seed's body got %d", code)
	}
}

func TestReencodedBodiesAreCheckedPartByPart(t *testing.T) {
	title := [2]string{"title", payload.Title}
	data, contentType := reencoded(9, 70_000, [][2]string{title}, "upload", payload.FileName)
	spec := payload.Spec{Mode: payload.Reencode, Seed: 9, Size: 70_000}
	if code := post(t, spec, contentType, data, ""); code != 200 {
		t.Fatalf("a clean re-encoded body got %d", code)
	}
	if code := post(t, payload.Spec{Mode: payload.Reencode, Seed: 9, Size: 69_999}, contentType, data, ""); code != 422 {
		t.Fatalf("a file of the wrong size got %d", code)
	}
	if code := post(t, payload.Spec{Mode: payload.Rules, Seed: 9, Size: 70_000}, contentType, data, ""); code != 422 {
		t.Fatalf("a body without the rules' changes passed as rules: %d", code)
	}
	at := bytes.Index(data, []byte("\r\n\r\n\x89PNG")) + 4 + 30_000
	data[at] ^= 1
	if code := post(t, spec, contentType, data, ""); code != 422 {
		t.Fatalf("a file byte flipped got %d", code)
	}
	data[at] ^= 1

	renamed := "file-3f2b8c1e-9a4d-4e2f-8b1c-0123456789ab.png"
	content := make([]byte, 70_000)
	payload.FillAny(content, 9, 0)
	sum := sha256.Sum256(content)
	digest := hex.EncodeToString(sum[:])
	ruled, ruledType := reencoded(9, 70_000, [][2]string{{"via", "formgate"}, title, {"file.sha256", digest}}, "file", renamed)
	digests := payload.Spec{Mode: payload.Digests, Seed: 9, Size: 70_000}
	if code := post(t, digests, ruledType, ruled, digest); code != 200 {
		t.Fatalf("a clean digests body got %d", code)
	}
	wrong := strings.Repeat("0", 64)
	if code := post(t, digests, ruledType, ruled, wrong); code != 422 {
		t.Fatalf("a wrong file.sha256 got %d", code)
	}
	extra, extraType := reencoded(9, 70_000, [][2]string{{"via", "formgate"}, title, {"file.sha256", digest}, {"x", "y"}}, "file", renamed)
	if code := post(t, digests, extraType, extra, digest); code != 422 {
		t.Fatalf("an unexpected field got %d", code)
	}
}
