public import HTTPCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Builds a whole `multipart/form-data` request body on the client side: text fields, and
/// files streamed from disk in 64 KiB reads.
///
/// This is the job the classic iOS upload helpers did by hand. `contentLength` is exact and
/// known before the first byte is written (file sizes are taken when files are added, and
/// `write` fails rather than send a different number of bytes).
public struct MultipartFormBuilder: Sendable {
    enum Content: Sendable {
        case bytes([UInt8])
        case file(path: String, size: Int64)
    }

    struct Item: Sendable {
        var disposition: ContentDisposition
        var headers: HeaderFields
        var content: Content
    }

    /// The boundary the body will use.
    public let boundary: Boundary
    private var items: [Item] = []

    /// Creates an empty form; by default with a fresh random boundary.
    public init(boundary: Boundary = .random()) {
        self.boundary = boundary
    }

    /// The `Content-Type` header value for the request.
    public var contentType: String { "multipart/form-data; boundary=\(boundary)" }

    /// Adds a text field.
    public mutating func addField(name: String, value: String) {
        addField(name: Array(name.utf8), value: Array(value.utf8))
    }

    /// Adds a field from bytes.
    public mutating func addField(name: [UInt8], value: [UInt8]) {
        items.append(
            Item(disposition: ContentDisposition(name: name), headers: HeaderFields(), content: .bytes(value))
        )
    }

    /// Adds a file part whose content is in memory.
    public mutating func addFile(
        name: String, filename: String, contentType: String = "application/octet-stream", content: [UInt8]
    ) {
        items.append(
            Item(
                disposition: ContentDisposition(name: name, filename: filename),
                headers: HeaderFields([("Content-Type", contentType)]), content: .bytes(content)))
    }

    /// Adds a file part streamed from `path`; its size is taken now.
    ///
    /// - Throws: `.io` when the file cannot be opened or is not a regular file.
    public mutating func addFile(
        name: String, filename: String, contentType: String = "application/octet-stream", path: String
    ) throws(MultipartEncodingError) {
        var info = stat()
        guard stat(path, &info) == 0 else { throw MultipartEncodingError(.io(path: path, errno: errno)) }
        guard (info.st_mode & S_IFMT) == S_IFREG else {
            throw MultipartEncodingError(.io(path: path, errno: EINVAL))
        }
        items.append(
            Item(
                disposition: ContentDisposition(name: name, filename: filename),
                headers: HeaderFields([("Content-Type", contentType)]),
                content: .file(path: path, size: Int64(info.st_size))))
    }

    /// The exact number of bytes `write(into:)` will produce.
    public var contentLength: Int64 {
        var sink = CountingSink()
        // Framing is counted by writing it; file content by the sizes taken in `addFile`.
        try? emit(into: &sink, readFiles: false)
        return items.reduce(sink.count) { total, item in
            if case .file(_, let size) = item.content { return total + size }
            return total
        }
    }

    /// Writes the whole body, streaming files from disk.
    ///
    /// - Throws: `.io` on a read error, `.fileChanged` when a file's size is not what it was.
    public func write(into sink: inout some ByteSink) throws(MultipartEncodingError) {
        try emit(into: &sink, readFiles: true)
    }

    private func emit(into sink: inout some ByteSink, readFiles: Bool) throws(MultipartEncodingError) {
        var encoder = MultipartEncoder(boundary: boundary)
        for item in items {
            try encoder.beginPart(item.disposition, headers: item.headers, into: &sink)
            switch item.content {
            case .bytes(let bytes):
                sink.write(bytes)
            case .file(let path, let size):
                if readFiles { try Self.stream(path: path, size: size, into: &sink) }
            }
        }
        try encoder.finish(into: &sink)
    }

    /// Copies exactly `size` bytes of the file at `path` into `sink`, 64 KiB at a time.
    private static func stream(path: String, size: Int64, into sink: inout some ByteSink)
        throws(MultipartEncodingError)
    {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw MultipartEncodingError(.io(path: path, errno: errno)) }
        defer { close(descriptor) }
        let chunk = UnsafeMutableRawBufferPointer.allocate(byteCount: 64 * 1024, alignment: 16)
        defer { chunk.deallocate() }
        var remaining = size
        while true {
            let got = read(descriptor, chunk.baseAddress, chunk.count)
            if got < 0 {
                if errno == EINTR { continue }
                throw MultipartEncodingError(.io(path: path, errno: errno))
            }
            if got == 0 { break }
            guard Int64(got) <= remaining else { throw MultipartEncodingError(.fileChanged(path: path)) }
            sink.write(UnsafeRawBufferPointer(rebasing: chunk[0..<got]))
            remaining -= Int64(got)
        }
        guard remaining == 0 else { throw MultipartEncodingError(.fileChanged(path: path)) }
    }
}
