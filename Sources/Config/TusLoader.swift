import ProxyCore
import Resumable

/// Decodes a route's `tus:` section (DESIGN.md, "Resumable uploads").
enum TusLoader {
    /// The most parts an S3 multipart upload has.
    static let maxParts = 10_000

    /// `tus: { store, max_size, expire_after, deliver: { path, file_field, fields } }`.
    static func decodeTus(_ node: YAMLNode, _ path: String, _ decoder: inout ValueDecoder) -> TusSettings? {
        let keys: Set<String> = ["store", "max_size", "expire_after", "deliver", "trust_forwarded"]
        guard let entries = decoder.mapping(node, path, allowed: keys) else { return nil }
        var settings = TusSettings()
        var delivers = false
        for (key, _, value) in entries {
            let keyPath = join(path, key)
            switch key {
            case "store":
                if case .mapping = value {
                    if let objectStore = decodeObjectStore(value, keyPath, &decoder) {
                        settings.objectStore = objectStore
                        settings.store = objectStore.description
                    }
                    continue
                }
                guard let store = decoder.string(value, keyPath) else { continue }
                if store.isEmpty || store.utf8.contains(0) {
                    decoder.fail(value.mark, keyPath, "expected a directory")
                } else {
                    settings.store = store
                }
            case "max_size":
                guard let size = decoder.size(value, keyPath) else { continue }
                if size > 0 {
                    settings.maxSize = size
                } else {
                    decoder.fail(value.mark, keyPath, "must be more than 0")
                }
            case "expire_after":
                guard let milliseconds = decoder.duration(value, keyPath) else { continue }
                if milliseconds >= 1000 {
                    settings.expireAfterMilliseconds = milliseconds
                } else {
                    decoder.fail(value.mark, keyPath, "must be at least 1s")
                }
            case "trust_forwarded":
                settings.trustForwarded = decoder.bool(value, keyPath) ?? false
            default:
                delivers = decodeDeliver(value, keyPath, &decoder, into: &settings)
            }
        }
        if !delivers {
            decoder.fail(node.mark, join(path, "deliver.path"), "a tus route needs deliver: { path: … }")
        }
        // S3 takes at most 10,000 parts: `max_size` must fit in them.
        if let objectStore = settings.objectStore,
            settings.maxSize > Int64(objectStore.partSize) * Int64(Self.maxParts)
        {
            decoder.fail(
                node.mark, join(path, "max_size"),
                "\(settings.maxSize) bytes do not fit in S3's 10,000 parts of part_size \(objectStore.partSize): raise part_size to at least \((settings.maxSize + Int64(Self.maxParts) - 1) / Int64(Self.maxParts)) bytes"
            )
        }
        return settings
    }

    /// `deliver:`; false when it has no usable `path`.
    private static func decodeDeliver(
        _ node: YAMLNode, _ path: String, _ decoder: inout ValueDecoder, into settings: inout TusSettings
    ) -> Bool {
        guard let entries = decoder.mapping(node, path, allowed: ["path", "file_field", "fields"]) else {
            return false
        }
        var delivers = false
        for (key, _, value) in entries {
            let keyPath = join(path, key)
            switch key {
            case "path":
                guard let target = decoder.string(value, keyPath) else { continue }
                if target.hasPrefix("/"), !target.utf8.contains(where: { $0 <= 0x20 || $0 == 0x7F }) {
                    settings.deliverPath = target
                    delivers = true
                } else {
                    decoder.fail(value.mark, keyPath, "expected an upstream path starting with /")
                }
            case "file_field":
                guard let name = decoder.string(value, keyPath) else { continue }
                if fieldName(name) {
                    settings.fileField = name
                } else {
                    decoder.fail(value.mark, keyPath, "not a field name")
                }
            default:
                guard let names = decoder.stringList(value, keyPath) else { continue }
                for name in names where !fieldName(name) || name.contains(",") || name.contains(" ") {
                    decoder.fail(value.mark, keyPath, "'\(name)' is not an Upload-Metadata key")
                }
                settings.fields = names
            }
        }
        return delivers
    }

    /// A form field name the encoder can write (non-empty, no control characters).
    private static func fieldName(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.count <= 256 && !name.utf8.contains(where: { $0 < 0x20 || $0 == 0x7F })
    }

    /// The checks a tus route's other keys must pass.
    static func checkRoute(
        _ route: Route, _ settings: TusSettings, _ mark: SourceMark, _ path: String,
        _ decoder: inout ValueDecoder
    ) {
        if !route.methods.isEmpty {
            decoder.fail(
                mark, join(path, "match.methods"), "a tus route answers its own methods (leave methods out)")
        }
        if route.rules.dropFields.contains(settings.fileField) {
            decoder.fail(
                mark, join(path, "tus.deliver.file_field"),
                "multipart.drop_fields drops '\(settings.fileField)': the delivery would lose its file")
        }
        if route.pathPrefix.hasSuffix("/"), route.pathPrefix != "/" {
            decoder.fail(mark, join(path, "match.path"), "a tus creation URL has no trailing /")
        }
    }
}
