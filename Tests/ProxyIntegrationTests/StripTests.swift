import Foundation
import Testing

/// `strip_metadata` through the whole proxy (issue 30), judged by outside tools on the bytes a
/// recording upstream received: exiftool finds no GPS, XMP, IPTC or comment, Pillow decodes
/// the same pixels as the original's, dwebp decodes the WebP, blank mode keeps each file's
/// length (and a declared `Content-Length`), the sha256 digest field is of the stripped bytes,
/// and the access log lists what was stripped. Images are made at test time by
/// `scripts/make-image-fixtures.py`; a missing tool fails the test.
@Suite(.serialized) struct StripTests {
    static let images = ["photo.jpg", "large.jpg", "text.png", "large.png", "meta.webp", "photo.heic"]

    /// A proxy in front of `upstream` with one route at `/upload` whose `multipart:` holds `rules`.
    static func proxy(_ upstream: FakeUpstream, _ route: String, _ rules: String) throws -> ServerProcess {
        try startProxy(
            """
            upstream: \(upstream.url)
            routes:
              - match: { path: /upload }
                \(route)
                multipart:
            \(rules.split(separator: "\n").map { "      \($0)\n" }.joined())
            """)
    }

    /// Judges one stripped image as the upstream received it: different from the original,
    /// of the original's length (`blank`) or shorter (`remove`), nothing private left for
    /// exiftool, the same pixels for Pillow, and a WebP dwebp decodes. Returns its path.
    @discardableResult
    static func judge(
        _ fixtures: StripFixtures, _ file: String, received: [UInt8]?, blank: Bool, label: String
    ) throws -> String {
        let received = try #require(received, "\(label) \(file): the upstream got no such part")
        let original = try fixtures.bytes(file)
        #expect(sha256Hex(received) != sha256Hex(original), "\(label) \(file): passed unchanged")
        if blank || file.hasSuffix(".heic") {
            #expect(received.count == original.count, "\(label) \(file): blank mode changed the length")
        } else {
            #expect(received.count < original.count, "\(label) \(file): remove mode cut nothing")
        }
        let path = try fixtures.write(received, as: "\(label)-\(file)")
        let left = try ImageJudge.privateTags([path])[path]
        #expect(left == [], "\(label) \(file): exiftool still finds \(left ?? [])")
        #expect(try ImageJudge.samePixels(fixtures.path(file), path), "\(label) \(file): pixels differ")
        if file.hasSuffix(".webp") {
            let riffSize =
                received.count >= 8 ? received[4..<8].reversed().reduce(0) { $0 << 8 | Int($1) } : -1
            #expect(riffSize == received.count - 8, "\(label) \(file): the RIFF size is not the file's")
            #expect(try ImageJudge.dwebpDecodes(path), "\(label) \(file): dwebp cannot decode it")
        }
        return path
    }

    /// The fixtures carry what must go (a test that could not fail proves nothing).
    static func expectPrivateOriginals(_ fixtures: StripFixtures, _ files: [String]) throws {
        let tags = try ImageJudge.privateTags(files.map(fixtures.path))
        for file in files {
            #expect(tags[fixtures.path(file)]?.contains("GPSLatitude") == true, "\(file) has no GPS to strip")
        }
    }

    /// A file that is no image (seeded bytes that start like text).
    static func notes(_ fixtures: StripFixtures) throws -> String {
        try fixtures.write(
            Array("notes: not an image\n".utf8) + SeededRandom.bytes(5000, seed: 0x57A1), as: "notes.bin")
    }

    /// Six images and a file that is no image in one request on a stream route: each image
    /// stripped in place (no Orientation left either), the other file byte for byte.
    @Test func blankModeOnAStreamRouteStripsEveryFormatInPlace() throws {
        let fixtures = try StripFixtures()
        try Self.expectPrivateOriginals(fixtures, Self.images)
        let upstream = try recordingUpstream()
        defer { upstream.stop() }
        let proxy = try Self.proxy(
            upstream, "",
            """
            sniff: { content_type: keep }
            digest: { algorithms: [sha256] }
            strip_metadata: { formats: [jpeg, png, webp, heic], mode: blank }
            """)
        defer { proxy.stop() }
        var parts = Self.images.enumerated().map {
            (field: "img\($0.offset)", path: fixtures.path($0.element), type: String?.none)
        }
        parts.append((field: "notes", path: try Self.notes(fixtures), type: "application/octet-stream"))
        let answer = try curlUpload(proxy.url + "/upload", parts)
        #expect(answer.status == 200, "\(answer.body)")

        let (requests, exact) = receivedRequests(upstream, count: 1)
        #expect(exact, "the upstream's connection carried more or less than one whole request")
        let request = try #require(requests.first)
        #expect(endsAtItsClosingDelimiter(request), "the body's length or end is not exact")
        let received = partsByName(request)
        let logged = loggedParts(proxy.accessLog(atLeast: 1).first)
        for (index, file) in Self.images.enumerated() {
            let bytes = received["img\(index)"]?.bytes
            let path = try Self.judge(fixtures, file, received: bytes, blank: true, label: "blank")
            #expect(
                received["img\(index).sha256"].map { String(decoding: $0.bytes, as: UTF8.self) }
                    == Digest.hex(bytes ?? []),
                "\(file): the digest field is not the sha256 of the bytes sent upstream")
            let stripped = strippedKinds(logged["img\(index)"])
            #expect(
                stripped.isSuperset(of: StripFixtures.expectedStripped(file)),
                "\(file): the access log lists \(stripped)")
            if file.hasSuffix(".jpg") {
                #expect(try ImageJudge.orientation(path) == "", "\(file): Orientation kept without keep")
            }
        }
        let notes = try fixtures.bytes("notes.bin")
        #expect(sha256Hex(received["notes"]?.bytes) == sha256Hex(notes), "a file that is no image changed")
        #expect(
            received["notes.sha256"].map { String(decoding: $0.bytes, as: UTF8.self) } == Digest.hex(notes))
        #expect(strippedKinds(logged["notes"]).isEmpty, "\(logged["notes"] ?? [:])")
    }

    /// A stream route whose store needs a `Content-Length` (a Qiniu token) declares it from the
    /// client's length when the file begins: blank mode keeps it exact, with no padding.
    @Test func blankModeKeepsTheLengthAStreamRouteDeclares() throws {
        let fixtures = try StripFixtures()
        let upstream = try recordingUpstream()
        defer { upstream.stop() }
        let proxy = try Self.proxy(
            upstream, "request_body: stream",
            """
            sniff: { content_type: keep }
            inject:
              - { name: token, before: file, qiniu: { access_key: test-ak, secret_key: test-sk, scope: "photos:{filename}", ttl: 1h } }
            strip_metadata: true
            """)
        defer { proxy.stop() }
        let files = ["large.jpg", "large.png", "meta.webp"]
        for file in files {
            let answer = try curlUpload(
                proxy.url + "/upload", [(field: "file", path: fixtures.path(file), type: nil)])
            #expect(answer.status == 200, "\(file): \(answer.body)")
        }
        let (requests, exact) = receivedRequests(upstream, count: files.count)
        #expect(exact, "the upstream's connections carried more or less than \(files.count) whole requests")
        // Each worker has its own upstream connections: the recorder's order is theirs, not the
        // uploads'. A request is matched to its file by the file part's name.
        for file in files {
            let request = try #require(
                requests.first { partsByName($0)["file"]?.filename == file }, "\(file): never arrived")
            #expect(request.values("Transfer-Encoding").isEmpty, "\(file): sent chunked")
            #expect(request.values("Content-Length").count == 1, "\(file): no Content-Length declared")
            #expect(endsAtItsClosingDelimiter(request), "\(file): padded or cut to fit the declared length")
            #expect(partsByName(request)["token"] != nil, "\(file): no token")
            try Self.judge(
                fixtures, file, received: partsByName(request)["file"]?.bytes, blank: true, label: "declared")
        }
        let lines = proxy.accessLog(atLeast: files.count)
        for (file, line) in zip(files, lines) {
            let stripped = strippedKinds(loggedParts(line)["file"])
            #expect(stripped.isSuperset(of: StripFixtures.expectedStripped(file)), "\(file): \(stripped)")
        }
    }

    @Test func keepOrientationKeepsOnlyTheOrientation() throws {
        let fixtures = try StripFixtures()
        let upstream = try recordingUpstream()
        defer { upstream.stop() }
        let proxy = try Self.proxy(
            upstream, "",
            """
            sniff: { content_type: keep }
            strip_metadata: { formats: [jpeg, webp], keep: [orientation] }
            """)
        defer { proxy.stop() }
        let files = ["photo.jpg", "large.jpg", "meta.webp"]
        for file in files {
            #expect(try ImageJudge.orientation(fixtures.path(file)) == "6", "\(file) fixture")
        }
        let answer = try curlUpload(
            proxy.url + "/upload",
            files.enumerated().map { (field: "img\($0.offset)", path: fixtures.path($0.element), type: nil) })
        #expect(answer.status == 200, "\(answer.body)")
        let request = try #require(receivedRequests(upstream, count: 1).requests.first)
        #expect(endsAtItsClosingDelimiter(request))
        let received = partsByName(request)
        for (index, file) in files.enumerated() {
            let path = try Self.judge(
                fixtures, file, received: received["img\(index)"]?.bytes, blank: true, label: "keep")
            #expect(try ImageJudge.orientation(path) == "6", "\(file): Orientation lost")
        }
    }

    /// The format is the sniffed one: formats the route does not name and files that are no
    /// image pass byte for byte, whatever their names and declared types say; a JPEG named and
    /// declared as a PNG is stripped.
    @Test func formatsNotListedAndNonImagesPassByteIdentical() throws {
        let fixtures = try StripFixtures()
        let upstream = try recordingUpstream()
        defer { upstream.stop() }
        let proxy = try Self.proxy(
            upstream, "",
            """
            sniff: { content_type: keep }
            strip_metadata: { formats: [jpeg] }
            """)
        defer { proxy.stop() }
        let pngNamedJPEG = try fixtures.write(try fixtures.bytes("text.png"), as: "png-named.jpg")
        let jpegNamedPNG = try fixtures.write(try fixtures.bytes("photo.jpg"), as: "jpeg-named.png")
        let parts: [(field: String, path: String, type: String?)] = [
            ("png", fixtures.path("text.png"), "image/png"),
            ("webp", fixtures.path("meta.webp"), "image/webp"),
            ("heic", fixtures.path("photo.heic"), "image/heic"), ("notes", try Self.notes(fixtures), nil),
            ("pngNamedJPEG", pngNamedJPEG, "image/jpeg"), ("jpegNamedPNG", jpegNamedPNG, "image/png"),
        ]
        let answer = try curlUpload(proxy.url + "/upload", parts)
        #expect(answer.status == 200, "\(answer.body)")
        let request = try #require(receivedRequests(upstream, count: 1).requests.first)
        let received = partsByName(request)
        let logged = loggedParts(proxy.accessLog(atLeast: 1).first)
        for part in parts.dropLast() {
            let original = Array(try Data(contentsOf: URL(fileURLWithPath: part.path)))
            #expect(sha256Hex(received[part.field]?.bytes) == sha256Hex(original), "\(part.field) changed")
            #expect(
                strippedKinds(logged[part.field]).isEmpty, "\(logged[part.field] ?? [:])")
        }
        try Self.judge(
            fixtures, "photo.jpg", received: received["jpegNamedPNG"]?.bytes, blank: true, label: "disguised")
        #expect(
            strippedKinds(logged["jpegNamedPNG"])
                == StripFixtures.expectedStripped("photo.jpg"))
    }

    /// `mode: remove` on a buffer route cuts the metadata out: shorter JPEG, PNG and WebP files
    /// (a WebP's RIFF size patched to its new length) that decode to the same pixels, HEIC
    /// blanked in place, an exact `Content-Length`, digests of what was sent.
    @Test func removeModeOnABufferRouteGivesShorterImagesAndBlanksAWebP() throws {
        let fixtures = try StripFixtures()
        let upstream = try recordingUpstream()
        defer { upstream.stop() }
        let proxy = try Self.proxy(
            upstream, "request_body: buffer",
            """
            sniff: { content_type: keep }
            digest: { algorithms: [sha256] }
            strip_metadata: { mode: remove }
            """)
        defer { proxy.stop() }
        let images = Self.images
        let answer = try curlUpload(
            proxy.url + "/upload",
            images.enumerated().map {
                (field: "img\($0.offset)", path: fixtures.path($0.element), type: nil)
            })
        #expect(answer.status == 200, "\(answer.body)")
        let (requests, exact) = receivedRequests(upstream, count: 1)
        #expect(exact)
        let request = try #require(requests.first)
        #expect(request.values("Content-Length").count == 1, "a buffer route sends a Content-Length")
        #expect(endsAtItsClosingDelimiter(request))
        let received = partsByName(request)
        let logged = loggedParts(proxy.accessLog(atLeast: 1).first)
        for (index, file) in images.enumerated() {
            let bytes = received["img\(index)"]?.bytes
            // A WebP is blanked (its RIFF size went first), the rest get shorter.
            try Self.judge(fixtures, file, received: bytes, blank: file.hasSuffix(".webp"), label: "remove")
            #expect(
                received["img\(index).sha256"].map { String(decoding: $0.bytes, as: UTF8.self) }
                    == Digest.hex(bytes ?? []), "\(file): digest")
            let stripped = strippedKinds(logged["img\(index)"])
            #expect(stripped.isSuperset(of: StripFixtures.expectedStripped(file)), "\(file): \(stripped)")
        }
    }
}
