import HTTPCore
import MultipartEncoding
import MultipartParsing
import Resumable
import Testing

/// The body that delivers a finished upload: configured fields in order, then the file, with an
/// exact length known before the file's bytes are read.
@Suite struct DeliveryFormTests {
    static func info(_ pairs: [(String, String?)], length: Int64) -> UploadInfo {
        UploadInfo(
            id: UploadID.random(), length: length, offset: length,
            metadata: UploadMetadata(
                pairs: pairs.map { .init(key: $0.0, value: $0.1.map { Array($0.utf8) }) }),
            owner: nil, createdAt: 0, expiresAt: 1, concatenation: .none)
    }

    @Test func fieldsComeInTheConfiguredOrderThenTheFile() throws {
        let info = Self.info(
            [
                ("filename", "IMG 1 \"x\".jpg"), ("album", "summer"), ("title", "Sea"), ("secret", "no"),
                ("filetype", "image/jpeg"),
            ],
            length: 5)
        let settings = TusSettings(
            deliverPath: "/upload", fileField: "upload", fields: ["title", "album", "absent"])
        let form = try DeliveryForm(info, settings: settings, boundary: try Boundary("b0undary"))
        let body = form.head + Array("hello".utf8) + form.tail
        #expect(Int64(body.count) == form.contentLength)
        #expect(form.contentType == "multipart/form-data; boundary=b0undary")
        let text = String(decoding: body, as: UTF8.self)
        #expect(
            text == "--b0undary\r\nContent-Disposition: form-data; name=\"title\"\r\n\r\nSea"
                + "\r\n--b0undary\r\nContent-Disposition: form-data; name=\"album\"\r\n\r\nsummer"
                + "\r\n--b0undary\r\nContent-Disposition: form-data; name=\"upload\"; filename=\"IMG 1 %22x%22.jpg\"\r\n"
                + "Content-Type: image/jpeg\r\n\r\nhello\r\n--b0undary--\r\n", "\(text)")
    }

    @Test(
        arguments: [
            (nil, "application/octet-stream"), ("text/plain; charset=utf-8", "text/plain"),
            ("not a type", "application/octet-stream"),
            ("image/png\r\nX-Evil: 1", "application/octet-stream"),
        ] as [(String?, String)])
    func theFileTypeIsAMediaTypeOrOctetStream(filetype: String?, expected: String) {
        #expect(DeliveryForm.fileType(filetype.map { Array($0.utf8) }) == expected)
    }

    @Test func anUploadWithoutAFilenameIsCalledUpload() throws {
        let form = try DeliveryForm(Self.info([], length: 0), settings: TusSettings(deliverPath: "/u"))
        #expect(String(decoding: form.head, as: UTF8.self).contains("name=\"file\"; filename=\"upload\""))
        #expect(form.fileLength == 0)
    }
}

/// A final upload's id follows from its creation, so the same creation again finds it.
@Suite struct FinalUploadIDTests {
    @Test func theSameCreationNamesTheSameUpload() {
        let parts = [UploadID.random(), UploadID.random()]
        let metadata = UploadMetadata(pairs: [.init(key: "filename", value: Array("a.bin".utf8))])
        let id = UploadID.final(of: parts, owner: "jwt:alice", metadata: metadata)
        #expect(UploadID(id.hex) == id)
        #expect(UploadID.final(of: parts, owner: "jwt:alice", metadata: metadata) == id)
        #expect(UploadID.final(of: parts, owner: "jwt:bob", metadata: metadata) != id)
        #expect(UploadID.final(of: parts.reversed(), owner: "jwt:alice", metadata: metadata) != id)
        #expect(UploadID.final(of: parts, owner: "jwt:alice", metadata: UploadMetadata()) != id)
    }
}
