import HTTPCore
import Testing

@testable import Resumable

@Suite struct TusRequestTests {
    let id = UploadID("0123456789abcdef0123456789abcdef")!
    let other = UploadID("fedcba9876543210fedcba9876543210")!

    func read(
        _ method: String, _ path: String, _ fields: [(String, String)], tus: Bool = true
    ) throws(TusRequest.Refusal) -> TusRequest {
        var headers = HeaderFields(fields)
        if tus { headers.append(name: "Tus-Resumable", value: "1.0.0") }
        return try TusRequest.read(
            method: method, path: path, headers: headers, prefix: "/files", maxSize: 1000)
    }

    func refusal(_ method: String, _ path: String, _ fields: [(String, String)], tus: Bool = true) -> Int? {
        do {
            _ = try read(method, path, fields, tus: tus)
            return nil
        } catch {
            return error.status
        }
    }

    @Test func optionsNeedsNoVersion() throws {
        #expect(try read("OPTIONS", "/files", [], tus: false) == .options)
        #expect(try read("OPTIONS", "/files/\(id)", [], tus: false) == .options)
    }

    @Test func versionIsRequired() {
        #expect(refusal("HEAD", "/files/\(id)", [], tus: false) == 412)
        #expect(refusal("HEAD", "/files/\(id)", [("Tus-Resumable", "0.2.2")], tus: false) == 412)
        #expect(refusal("HEAD", "/files/\(id)", [("Tus-Resumable", "1.0.0")]) == 400)  // repeated
    }

    @Test func creations() throws {
        let metadata = [("Upload-Metadata", "filename YS5qcGc=")]
        guard case .create(let plain) = try read("POST", "/files", [("Upload-Length", "10")] + metadata)
        else {
            Issue.record("not a creation")
            return
        }
        #expect(plain.length == 10)
        #expect(plain.metadata["filename"] == Array("a.jpg".utf8))
        #expect(!plain.withBody)
        guard case .create(let deferred) = try read("POST", "/files/", [("Upload-Defer-Length", "1")]) else {
            Issue.record("not a creation")
            return
        }
        #expect(deferred.length == nil)
        guard
            case .create(let upload) = try read(
                "POST", "/files",
                [
                    ("Upload-Length", "3"), ("Content-Type", "application/offset+octet-stream"),
                    ("Upload-Checksum", "sha1 Kq5sNclPz7QV2+lfQIuc6R7oRu0="),
                ])
        else {
            Issue.record("not a creation")
            return
        }
        #expect(upload.withBody)
        #expect(upload.checksum?.algorithm == .sha1)
        guard
            case .create(let final) = try read(
                "POST", "/files",
                [("Upload-Concat", "final;https://up.example.com/files/\(id) /files/\(other)")])
        else {
            Issue.record("not a creation")
            return
        }
        #expect(final.concat == .final([id, other]))
        #expect(final.length == nil)
    }

    @Test func creationRefusals() {
        #expect(refusal("POST", "/files", []) == 400)
        #expect(refusal("POST", "/files", [("Upload-Length", "1"), ("Upload-Defer-Length", "1")]) == 400)
        #expect(refusal("POST", "/files", [("Upload-Defer-Length", "2")]) == 400)
        #expect(refusal("POST", "/files", [("Upload-Length", "-1")]) == 400)
        #expect(refusal("POST", "/files", [("Upload-Length", "99999999999999999999")]) == 400)
        #expect(refusal("POST", "/files", [("Upload-Length", "1001")]) == 413)
        #expect(refusal("POST", "/files", [("Upload-Length", "1"), ("Upload-Length", "1")]) == 400)
        #expect(refusal("POST", "/files", [("Upload-Length", "1"), ("Upload-Metadata", "a b c")]) == 400)
        #expect(refusal("POST", "/files", [("Upload-Length", "1"), ("Content-Type", "text/plain")]) == 415)
        #expect(refusal("POST", "/files", [("Upload-Concat", "final;/other/\(id)")]) == 400)
        #expect(refusal("POST", "/files", [("Upload-Concat", "final;/files/../\(id)")]) == 400)
        #expect(
            refusal("POST", "/files", [("Upload-Concat", "final;/files/\(id)"), ("Upload-Length", "1")])
                == 400)
        #expect(refusal("PUT", "/files", []) == 405)
        #expect(refusal("GET", "/files/\(id)", []) == 405)
        #expect(refusal("POST", "/elsewhere", [("Upload-Length", "1")]) == 404)
    }

    @Test func patches() throws {
        let stream = ("Content-Type", "application/offset+octet-stream")
        #expect(
            try read("PATCH", "/files/\(id)", [stream, ("Upload-Offset", "5")])
                == .patch(TusRequest.Patch(id: id, offset: 5, length: nil, checksum: nil)))
        #expect(
            try read(
                "POST", "/files/\(id)", [stream, ("Upload-Offset", "0"), ("X-HTTP-Method-Override", "PATCH")])
                == .patch(TusRequest.Patch(id: id, offset: 0, length: nil, checksum: nil)))
        #expect(refusal("PATCH", "/files/\(id)", [("Upload-Offset", "5")]) == 415)
        #expect(refusal("PATCH", "/files/\(id)", [stream]) == 400)
        #expect(refusal("PATCH", "/files/\(id)", [stream, ("Upload-Offset", "-5")]) == 400)
        #expect(
            refusal("PATCH", "/files/\(id)", [stream, ("Upload-Offset", "1"), ("Upload-Offset", "2")]) == 400)
        #expect(
            refusal(
                "PATCH", "/files/\(id)",
                [stream, ("Upload-Offset", "0"), ("Upload-Checksum", "crc32 AAAAAA==")]) == 400)
        #expect(
            refusal("PATCH", "/files/\(id)", [stream, ("Upload-Offset", "0"), ("Upload-Length", "5000")])
                == 413)
    }

    @Test(arguments: ["../etc/passwd", "%2e%2e%2fx", "0123456789abcdef0123456789abcdef/x", "x\u{0}", ""])
    func pathsThatAreNotIDs(_ tail: String) {
        let status = refusal("HEAD", "/files/\(tail)", [])
        #expect(status == (tail.isEmpty ? 405 : 404))
    }

    @Test func headAndDelete() throws {
        #expect(try read("HEAD", "/files/\(id)", []) == .head(id))
        #expect(try read("DELETE", "/files/\(id)", []) == .delete(id))
        #expect(try read("POST", "/files/\(id)", [("X-HTTP-Method-Override", "DELETE")]) == .delete(id))
        #expect(refusal("POST", "/files/\(id)", [("X-HTTP-Method-Override", "TRACE")]) == 400)
    }
}
