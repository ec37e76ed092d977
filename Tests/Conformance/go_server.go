// A Go upload server for the conformance matrix: parses each POST with
// Request.ParseMultipartForm and answers {"fields": {...}, "files": [...]} (sha256 per file).
package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
)

type file struct {
	Field    string `json:"field"`
	Filename string `json:"filename"`
	Type     string `json:"type"`
	Size     int64  `json:"size"`
	Sha256   string `json:"sha256"`
}

func handle(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseMultipartForm(64 << 20); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	fields := map[string]string{}
	for name, values := range r.MultipartForm.Value {
		fields[name] = values[0]
	}
	files := []file{}
	for field, headers := range r.MultipartForm.File {
		for _, header := range headers {
			f, err := header.Open()
			if err != nil {
				http.Error(w, err.Error(), http.StatusInternalServerError)
				return
			}
			digest := sha256.New()
			size, _ := io.Copy(digest, f)
			f.Close()
			files = append(files, file{field, header.Filename, header.Header.Get("Content-Type"), size,
				hex.EncodeToString(digest.Sum(nil))})
		}
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	json.NewEncoder(w).Encode(map[string]interface{}{"fields": fields, "files": files})
}

func main() {
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	fmt.Fprintf(os.Stderr, "listening on %s\n", listener.Addr())
	http.Serve(listener, http.HandlerFunc(handle))
}
