// The Go client of the conformance matrix: builds the form with mime/multipart and posts it.
// Usage: go_client URL FIXTURES_DIR
package main

import (
	"bytes"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"os"
	"path/filepath"
)

func main() {
	url, dir := os.Args[1], os.Args[2]
	var body bytes.Buffer
	form := multipart.NewWriter(&body)
	form.WriteField("title", "Holiday ☀ 2026")
	form.WriteField("token", "client-supplied")
	for _, part := range [][3]string{
		{"upload", "photo.jpg", "image/jpeg"},
		{"notes", "notes.txt", "text/plain"},
		{"cv", "résumé 2026.pdf", "application/octet-stream"},
	} {
		header := textproto.MIMEHeader{}
		header.Set("Content-Disposition", fmt.Sprintf(`form-data; name="%s"; filename="%s"`, part[0], part[1]))
		header.Set("Content-Type", part[2])
		writer, _ := form.CreatePart(header)
		content, err := os.ReadFile(filepath.Join(dir, part[1]))
		if err != nil {
			panic(err)
		}
		writer.Write(content)
	}
	form.Close()
	response, err := http.Post(url, form.FormDataContentType(), &body)
	if err != nil {
		panic(err)
	}
	defer response.Body.Close()
	out, _ := io.ReadAll(response.Body)
	if response.StatusCode != 200 {
		fmt.Fprintf(os.Stderr, "status %d: %s\n", response.StatusCode, out)
		os.Exit(1)
	}
	os.Stdout.Write(out)
}
