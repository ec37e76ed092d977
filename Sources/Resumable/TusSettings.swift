/// A route's `tus:` section: where its uploads are stored, how large and how long they may
/// live, and how a finished one is delivered upstream.
public struct TusSettings: Sendable, Equatable {
    /// `store:` the directory of the embedded store; for an object store, its description
    /// (`objectStore.description`), which names its service.
    public var store: String
    /// `store: { s3: … }`: the bucket the uploads live in (nil: the directory `store`).
    public var objectStore: ObjectStoreSettings?
    /// `max_size:` `Tus-Max-Size`; a larger `Upload-Length` is 413.
    public var maxSize: Int64
    /// `expire_after:` an unfinished upload is deleted this long after its last PATCH
    /// (milliseconds); a delivered one this long after its delivery.
    public var expireAfterMilliseconds: Int64
    /// `deliver.path:` the upstream path of the POST sent when an upload completes.
    public var deliverPath: String
    /// `deliver.file_field:` the file part's name.
    public var fileField: String
    /// `deliver.fields:` the `Upload-Metadata` keys sent as form fields before the file.
    public var fields: [String]
    /// `trust_forwarded:` `Location` honours `X-Forwarded-Proto` and `X-Forwarded-Host` (set it
    /// only behind a front proxy that sets them).
    public var trustForwarded = false

    public static let defaultStore = "/var/lib/formgate/tus"

    public init(
        store: String = TusSettings.defaultStore, maxSize: Int64 = 4 << 30,
        expireAfterMilliseconds: Int64 = 24 * 3_600_000, deliverPath: String = "", fileField: String = "file",
        fields: [String] = []
    ) {
        self.store = store
        self.maxSize = maxSize
        self.expireAfterMilliseconds = expireAfterMilliseconds
        self.deliverPath = deliverPath
        self.fileField = fileField
        self.fields = fields
    }
}
