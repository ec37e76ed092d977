import Foundation
import Testing

/// Real images with metadata, written by `scripts/make-image-fixtures.py` into a fresh
/// directory per test (Pillow, piexif and heif-enc; about 0.4 s): `photo.jpg`, `large.jpg`,
/// `text.png`, `large.png`, `meta.webp`, `photo.heic`. The directory also takes what the
/// upstream received, so the outside tools read it from files.
final class StripFixtures {
    let directory: String
    /// The fixtures' file names, as the script's manifest lists them.
    let files: [String]

    init() throws {
        directory = NSTemporaryDirectory() + "formgate-strip-\(UUID().uuidString)"
        let script = packageRoot.appendingPathComponent("scripts/make-image-fixtures.py").path
        let result = try ImageJudge.execute(try python3(), [script, directory])
        guard result.status == 0 else { throw TestFailure("make-image-fixtures.py failed: \(result.errors)") }
        let manifest = try jsonObject(Data(result.output.utf8))
        guard manifest["heic"] as? Bool == true else {
            throw TestFailure("heif-enc made no HEIC (libheif-examples): \(manifest["heic_error"] ?? "")")
        }
        files = manifest["files"] as? [String] ?? []
    }

    deinit {
        if ProcessInfo.processInfo.environment["KEEP_STRIP_FIXTURES"] == nil {
            try? FileManager.default.removeItem(atPath: directory)
        }
    }

    func path(_ name: String) -> String { directory + "/" + name }

    func bytes(_ name: String) throws -> [UInt8] {
        Array(try Data(contentsOf: URL(fileURLWithPath: path(name))))
    }

    /// Writes `bytes` as `name` in the directory; its path.
    @discardableResult
    func write(_ bytes: [UInt8], as name: String) throws -> String {
        try Data(bytes).write(to: URL(fileURLWithPath: path(name)))
        return path(name)
    }

    /// What `strip_metadata` must report for each fixture (the access log's `stripped`).
    static func expectedStripped(_ file: String) -> Set<String> {
        switch (file as NSString).pathExtension {
        case "jpg": ["exif", "xmp", "iptc", "comment"]
        case "png": ["png:tEXt", "png:iTXt", "png:zTXt", "png:tIME", "png:eXIf"]
        case "webp": ["webp:EXIF", "webp:XMP"]
        default: ["heic:Exif"]
        }
    }
}

/// The outside tools that judge an image: exiftool (what private metadata is left, the
/// Orientation), Pillow through the fixture script (same pixels), dwebp and heif-convert
/// (decodes). A missing tool fails the test.
enum ImageJudge {
    struct Result {
        let status: Int32
        let output: String
        let errors: String
    }

    /// Runs `executable` to completion with its standard error kept apart.
    static func execute(_ executable: String, _ arguments: [String]) throws -> Result {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let output = Pipe()
        let errorFile = NSTemporaryDirectory() + "formgate-strip-tool-\(UUID().uuidString).err"
        _ = FileManager.default.createFile(atPath: errorFile, contents: nil)
        defer { try? FileManager.default.removeItem(atPath: errorFile) }
        process.standardOutput = output
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: errorFile))
        try process.run()
        let text = String(decoding: try readToEnd(output.fileHandleForReading.fileDescriptor), as: UTF8.self)
        process.waitUntilExit()
        let errors = (try? String(contentsOfFile: errorFile, encoding: .utf8)) ?? ""
        return Result(status: process.terminationStatus, output: text, errors: errors)
    }

    /// The tags `exiftool -gps:all -xmp:all -iptc:all -comment` finds in each of `paths`, by
    /// path; a tag with an empty value does not count (a blanked JPEG segment is a comment of
    /// zeros, which exiftool reads as an empty Comment).
    static func privateTags(_ paths: [String]) throws -> [String: [String]] {
        let result = try execute(
            try tool("exiftool"),
            ["-j", "-s", "-gps:all", "-xmp:all", "-iptc:all", "-comment"] + paths)
        guard result.status == 0 else { throw TestFailure("exiftool failed on \(paths): \(result.errors)") }
        guard
            let objects = try JSONSerialization.jsonObject(with: Data(result.output.utf8)) as? [[String: Any]]
        else { throw TestFailure("exiftool -j printed no array: \(result.output)") }
        var tags: [String: [String]] = [:]
        for object in objects {
            let found = object.filter { entry in
                entry.key != "SourceFile" && (entry.value as? String).map { !isBlank($0) } ?? true
            }
            tags[object["SourceFile"] as? String ?? ""] = found.keys.sorted()
        }
        return tags
    }

    /// Whether a tag's text is empty once NULs and spaces are left out.
    private static func isBlank(_ text: String) -> Bool {
        text.unicodeScalars.allSatisfy { $0 == "\0" || $0 == " " }
    }

    /// `exiftool -s3 -Orientation -n`: the numeric Orientation, or "" when there is none.
    static func orientation(_ path: String) throws -> String {
        let result = try execute(try tool("exiftool"), ["-s3", "-Orientation", "-n", path])
        guard result.status == 0 else { throw TestFailure("exiftool failed on \(path): \(result.errors)") }
        return result.output.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Whether Pillow decodes both files to the same mode, size and pixels (HEIC first goes
    /// through heif-convert to PNG).
    static func samePixels(_ first: String, _ second: String) throws -> Bool {
        var paths = [first, second]
        if first.hasSuffix(".heic") {
            for index in paths.indices {
                let png = paths[index] + ".png"
                let converted = try execute(try tool("heif-convert"), [paths[index], png])
                guard converted.status == 0 else {
                    throw TestFailure("heif-convert failed on \(paths[index]): \(converted.errors)")
                }
                paths[index] = png
            }
        }
        let script = packageRoot.appendingPathComponent("scripts/make-image-fixtures.py").path
        return try execute(try python3(), [script, "--same-pixels", paths[0], paths[1]]).status == 0
    }

    /// Whether `dwebp` decodes the file (to a PPM beside it).
    static func dwebpDecodes(_ path: String) throws -> Bool {
        try execute(try tool("dwebp"), [path, "-ppm", "-o", path + ".ppm"]).status == 0
    }
}

/// Uploads files with curl `-F` (field name, path, and optionally the declared type) to `url`;
/// the status (0 when curl failed) and the response body.
func curlUpload(_ url: String, _ parts: [(field: String, path: String, type: String?)], http2: Bool = false)
    throws -> (status: Int, body: String)
{
    var arguments = ["-sS", "-o", "-", "-w", "\n%{http_code}"]
    if http2 { arguments.append("--http2-prior-knowledge") }
    for part in parts {
        arguments += ["-F", "\(part.field)=@\(part.path)" + (part.type.map { ";type=\($0)" } ?? "")]
    }
    let result = try run(try tool("curl"), arguments + [url])
    let text = String(decoding: result.output, as: UTF8.self)
    let status = Int(text.split(separator: "\n").last ?? "") ?? 0
    return (status, String(text.dropLast(String(status).count)))
}

/// What a recording upstream received, once it holds `count` whole requests: the requests,
/// and whether the connections carried nothing but them (no bytes beyond a declared
/// `Content-Length`, none missing: every record is whole).
func receivedRequests(_ upstream: FakeUpstream, count: Int) -> (requests: [RecordedRequest], exact: Bool) {
    eventually(within: 10) { deliveries(upstream).count >= count }
    let records = UpstreamRecord.all(upstream)
    return (records.compactMap(\.request), records.count == count && records.allSatisfy { $0.request != nil })
}

/// The parts of a recorded multipart request by name (the last of a name wins).
func partsByName(_ request: RecordedRequest) -> [String: (filename: String?, bytes: [UInt8])] {
    var parts: [String: (filename: String?, bytes: [UInt8])] = [:]
    for part in multipartParts(request) { parts[part.name] = (part.filename, part.bytes) }
    return parts
}

/// Whether the body ends exactly with its closing delimiter and a CRLF (no padding or
/// epilogue after it) and its `Content-Length`, when it has one, is the body's length.
func endsAtItsClosingDelimiter(_ request: RecordedRequest) -> Bool {
    guard let type = request.values("Content-Type").first, let range = type.range(of: "boundary=") else {
        return false
    }
    let boundary = type[range.upperBound...].prefix { $0 != ";" }
    let close = Array("\r\n--\(boundary)--\r\n".utf8)
    let lengthMatches = request.values("Content-Length").allSatisfy { Int($0) == request.body.count }
    return lengthMatches && request.body.count >= close.count
        && Array(request.body.suffix(close.count)) == close
}

/// The access-log `parts` of a line, by part name.
func loggedParts(_ line: [String: Any]?) -> [String: [String: Any]] {
    var parts: [String: [String: Any]] = [:]
    for part in (line?["parts"] as? [[String: Any]]) ?? [] { parts[part["name"] as? String ?? ""] = part }
    return parts
}

/// What an access-log part lists as `stripped` (empty when it lists nothing).
func strippedKinds(_ part: [String: Any]?) -> Set<String> {
    Set(part?["stripped"] as? [String] ?? [])
}

/// The SHA-256 of `bytes` in hex (nil for none): files compared by it, so a failure prints
/// two digests instead of two files.
func sha256Hex(_ bytes: [UInt8]?) -> String? {
    bytes.map(Digest.hex)
}
