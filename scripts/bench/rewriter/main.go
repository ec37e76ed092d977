// Command rewriter is what a user might write instead of FormGate: a Go reverse proxy that
// re-encodes multipart/form-data bodies under a new boundary (mime/multipart reader and
// writer, streamed through a pipe) and forwards them with net/http/httputil.ReverseProxy
// over pooled keep-alive connections. Other requests pass through unchanged.
package main

import (
	"flag"
	"fmt"
	"io"
	"log"
	"mime"
	"mime/multipart"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"time"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:0", "address to listen on")
	upstream := flag.String("upstream", "", "upstream URL")
	flag.Parse()
	target, err := url.Parse(*upstream)
	if err != nil || target.Host == "" {
		log.Fatalf("rewriter: bad -upstream %q", *upstream)
	}
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.Transport = &http.Transport{
		Proxy: nil, MaxIdleConns: 1024, MaxIdleConnsPerHost: 1024, IdleConnTimeout: 10 * time.Minute,
		DisableCompression: true, WriteBufferSize: 64 << 10, ReadBufferSize: 64 << 10,
	}
	listener, err := net.Listen("tcp", *listen)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(listener.Addr().String())
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mediaType, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
		if err == nil && mediaType == "multipart/form-data" && params["boundary"] != "" {
			reader := multipart.NewReader(r.Body, params["boundary"])
			piped, pipe := io.Pipe()
			writer := multipart.NewWriter(pipe)
			go func() { pipe.CloseWithError(reencode(reader, writer)) }()
			r.Body = piped
			r.ContentLength = -1
			r.Header.Del("Content-Length")
			r.Header.Set("Content-Type", writer.FormDataContentType())
		}
		proxy.ServeHTTP(w, r)
	})
	server := &http.Server{Handler: handler, ReadHeaderTimeout: time.Minute, IdleTimeout: 10 * time.Minute}
	log.Fatal(server.Serve(listener))
}

// reencode copies every part, headers and bytes, from reader to writer, then closes writer.
func reencode(reader *multipart.Reader, writer *multipart.Writer) error {
	for {
		part, err := reader.NextRawPart()
		if err == io.EOF {
			return writer.Close()
		}
		if err != nil {
			return err
		}
		destination, err := writer.CreatePart(part.Header)
		if err != nil {
			return err
		}
		if _, err := io.Copy(destination, part); err != nil {
			return err
		}
	}
}
