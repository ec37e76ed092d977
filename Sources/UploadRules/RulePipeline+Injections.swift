import HTTPCore
import MultipartEncoding

/// The fields a route injects (`inject:`: templates and token providers): where they are due,
/// and how an added field is written.
extension RulePipeline {
    /// The injections placed `first`, once, before the first part.
    mutating func emitFirstIfNeeded() {
        guard !emittedFirst else { return }
        emittedFirst = true
        for index in rules.inject.indices where rules.inject[index].position == .first {
            emitInjection(index, values: baseValues(field: "", index: 0))
        }
    }

    /// Emits injection `index` with `values` (a provider gets the file's type, if known).
    mutating func emitInjection(_ index: Int, values: TemplateValues, contentType: String? = nil) {
        let injection = rules.inject[index]
        switch injection.value {
        case .template(let template):
            emitInjected(InjectedField(name: injection.name, value: template.render(values, random: &random)))
        case .provider(let provider):
            let context = ProviderContext(
                values: values, contentType: contentType, now: now, maxFileBytes: maxFileBytes)
            providers.append(provider.kind)
            for field in provider.fields(for: context, random: &random) { emitInjected(field) }
        }
    }

    /// Writes one injected field and records it for the log.
    mutating func emitInjected(_ field: InjectedField) {
        emitField(name: field.name, value: field.value)
        injected.append(field.name)
        if field.name == "key" { objectKey = field.value }
    }

    /// Writes a field FormGate adds, head and value.
    mutating func emitField(name: String, value: String) {
        guard beginField(name: name) else { return }
        var value = value
        value.withUTF8 { output.write(UnsafeRawBufferPointer($0)) }
    }

    /// Writes the delimiter and head of a field FormGate adds (always into `sink`); returns
    /// false when the encoder refused.
    mutating func beginField(name: String) -> Bool {
        output.toDeferred = false
        do throws(MultipartEncodingError) {
            try encoder.beginPart(name: name, into: &output)
            return true
        } catch {
            refusal = Refusal(.encoding, description: "\(error)")
            return false
        }
    }
}
