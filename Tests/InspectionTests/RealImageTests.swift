import Foundation
import HTTPCore
import Inspection
import Testing

/// Real images written by Pillow, piexif and heif-enc (scripts/make-image-fixtures.py),
/// stripped, then read by the tools that would find what was left: exiftool finds no GPS,
/// XMP, IPTC or comment, Pillow (and dwebp, heif-convert) decode the same pixels as the
/// original's, blank mode keeps the length, keepOrientation keeps Orientation. Fails, not
/// skips, when a tool is missing (Debian: libimage-exiftool-perl, webp, libheif-examples,
/// python3-pil, python3-piexif).
@Suite(.serialized) struct RealImageTests {
    struct Tool {
        let status: Int32
        let output: String
        let errors: String
    }

    static let python = ProcessInfo.processInfo.environment["FORMGATE_PYTHON"] ?? "/usr/bin/python3"
    static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../../scripts/make-image-fixtures.py").standardized.path

    static func run(_ executable: String, _ arguments: [String]) throws -> Tool {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let output = Pipe()
        let errorFile = FileManager.default.temporaryDirectory
            .appendingPathComponent("strip-tool-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).err")
        _ = FileManager.default.createFile(atPath: errorFile.path, contents: nil)
        defer { try? FileManager.default.removeItem(at: errorFile) }
        process.standardOutput = output
        process.standardError = try FileHandle(forWritingTo: errorFile)
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        let errors = (try? String(contentsOf: errorFile, encoding: .utf8)) ?? ""
        return Tool(status: process.terminationStatus, output: text, errors: errors)
    }

    /// The fixtures, written once into a fresh directory.
    static func fixtures() throws -> (directory: URL, files: [String]) {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("strip-fixtures-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        let result = try run(python, [script, directory.path])
        try #require(result.status == 0, "make-image-fixtures.py failed: \(result.errors)")
        let manifest = try #require(
            try JSONSerialization.jsonObject(with: Data(result.output.utf8)) as? [String: Any])
        let files = try #require(manifest["files"] as? [String])
        #expect(manifest["heic"] as? Bool == true, "heif-enc made no HEIC: \(manifest["heic_error"] ?? "")")
        return (directory, files)
    }

    /// What exiftool reports of GPS, XMP, IPTC and comments (tag names; empty values aside).
    static func privateTags(_ path: String) throws -> [String] {
        let result = try run(
            "/usr/bin/exiftool", ["-j", "-s", "-gps:all", "-xmp:all", "-iptc:all", "-comment", path])
        try #require(result.status == 0, "exiftool failed on \(path): \(result.errors)")
        let objects = try #require(
            try JSONSerialization.jsonObject(with: Data(result.output.utf8)) as? [[String: Any]])
        // A blanked JPEG segment is a COM of zeros: exiftool reads it as an empty comment.
        let found = objects.first?.filter { $0.key != "SourceFile" && ($0.value as? String) != "" }
        return found.map { $0.keys.sorted() } ?? []
    }

    static func orientation(_ path: String) throws -> String {
        let result = try run("/usr/bin/exiftool", ["-s3", "-Orientation", "-n", path])
        try #require(result.status == 0, "exiftool failed on \(path): \(result.errors)")
        return result.output.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Whether two files decode to the same pixels (HEIC through heif-convert to PNG).
    static func samePixels(_ first: String, _ second: String, heic: Bool) throws -> Bool {
        var paths = [first, second]
        if heic {
            for index in paths.indices {
                let png = paths[index] + ".png"
                let converted = try run("/usr/bin/heif-convert", [paths[index], png])
                try #require(
                    converted.status == 0, "heif-convert failed on \(paths[index]): \(converted.errors)")
                paths[index] = png
            }
        }
        let result = try run(python, [script, "--same-pixels", paths[0], paths[1]])
        return result.status == 0
    }

    static func format(of file: String) -> ImageFormat {
        switch (file as NSString).pathExtension {
        case "jpg": .jpeg
        case "png": .png
        case "webp": .webp
        default: .heic
        }
    }

    @Test func strippedImagesKeepNothingPrivateAndDecodeTheSame() throws {
        let (directory, files) = try Self.fixtures()
        defer {
            if ProcessInfo.processInfo.environment["KEEP_STRIP_FIXTURES"] == nil {
                try? FileManager.default.removeItem(at: directory)
            }
        }
        #expect(files.count == 6)
        var generator = SplitMix64(seed: 4242)
        for file in files {
            let format = Self.format(of: file)
            let original = directory.appendingPathComponent(file).path
            let bytes = Array(try Data(contentsOf: URL(fileURLWithPath: original)))
            #expect(try Self.privateTags(original).contains("GPSLatitude"), "\(file): the fixture has no GPS")
            let runs: [(String, StripOptions)] = [
                ("blank", StripOptions()), ("orientation", StripOptions(keepOrientation: true)),
                ("remove", StripOptions(mode: .remove)),
            ]
            for (name, options) in runs {
                let cuts = randomCuts(count: bytes.count, maxPiece: 5000, generator: &generator)
                let run = strip(bytes, format, options, cuts: cuts)
                let label = "\(file) \(name) (seed 4242)"
                #expect(!run.stripper.passedThrough, "\(label)")
                #expect(!run.stripper.stripped.isEmpty, "\(label)")
                #expect(run.stripper.patchesComplete, "\(label)")
                if options.mode == .blank || format == .heic {
                    #expect(run.output.count == bytes.count, "\(label)")
                    #expect(run.stripper.unstrippable == nil, "\(label)")
                }
                let path = directory.appendingPathComponent("\(name)-\(file)").path
                try Data(run.patched).write(to: URL(fileURLWithPath: path))
                #expect(try Self.privateTags(path) == [], "\(label): exiftool still finds these")
                #expect(try Self.samePixels(original, path, heic: format == .heic), "\(label): pixels differ")
                if format == .webp {
                    let decoded = try Self.run("/usr/bin/dwebp", [path, "-o", path + ".ppm", "-ppm"])
                    #expect(decoded.status == 0, "\(label): dwebp: \(decoded.errors)")
                }
                if options.keepOrientation && (format == .jpeg || format == .webp) {
                    #expect(try Self.orientation(path) == "6", "\(label): Orientation lost")
                }
            }
        }
    }
}
