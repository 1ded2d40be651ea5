import Foundation
import Models
import Tensor

/// What a recognizer needs that an ONNX graph does not carry: the class names, the preprocessing that makes the
/// input, the decision rule. Our export writes each field as one `metadata_props` entry (its key, its value as
/// JSON); a model from elsewhere gets them from a sidecar the user writes beside it, `MODEL.onnx.json`, holding the
/// same fields as one JSON object:
///
/// ```json
/// {"labels": ["circle", "triangle", "square", "star", "other"], "task": "shape"}
/// ```
///
/// `labels` is required (one per output, in output order). `task` (`shape` or `motion`) stands for that task's
/// default preprocessing; `preprocessing` gives it in full instead, as our weights files do (`classify inspect
/// --json` shows one). `decision` (temperature, reject label, uncertainty floor), `name`, `description` and
/// `training` are optional.
public struct ONNXModelInfo: Codable, Equatable, Sendable {
    /// The model's name (default: the file's name without its extension).
    public var name: String?
    /// The class names, in output order.
    public var labels: [String]
    /// `shape` or `motion`: that task's default preprocessing, when `preprocessing` is absent.
    public var task: String?
    /// The preprocessing, as a weights file's header stores it.
    public var preprocessing: [String: JSONValue]?
    /// How outputs become an answer; `nil`: the rule our training starts from (temperature 1, `other` answers
    /// `unknown` when it is a label, uncertain below 70%).
    public var decision: DecisionRule?
    /// What the input is, for people.
    public var description: String?
    /// How it was trained.
    public var training: TrainingMetadata?

    /// Creates the information.
    public init(
        name: String? = nil, labels: [String], task: String? = nil, preprocessing: [String: JSONValue]? = nil,
        decision: DecisionRule? = nil, description: String? = nil, training: TrainingMetadata? = nil
    ) {
        (self.name, self.labels, self.task, self.preprocessing) = (name, labels, task, preprocessing)
        (self.decision, self.description, self.training) = (decision, description, training)
    }

    /// The metadata keys our export writes, one per field.
    static let keys = ["name", "labels", "task", "preprocessing", "decision", "description", "training"]

    /// The preprocessing: given, or the task's default; `nil` when neither says.
    func resolvedPreprocessing() -> [String: JSONValue]? {
        if let preprocessing { return preprocessing }
        switch task {
        case "shape": return ShapeRasterizer().parameters
        case "motion": return MotionModelDefaults.preprocessing
        default: return nil
        }
    }

    /// The fields as `metadata_props` entries: each present field's JSON under its key.
    func metadataEntries() -> [(key: String, value: String)] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard let data = try? encoder.encode(self),
            case let object as [String: Any] = try? JSONSerialization.jsonObject(with: data)
        else { return [] }
        return Self.keys.compactMap { key in
            guard let value = object[key],
                let json = try? JSONSerialization.data(withJSONObject: value, options: [.sortedKeys, .withoutEscapingSlashes, .fragmentsAllowed])
            else { return nil }
            return (key, String(decoding: json, as: UTF8.self))
        }
    }

    /// The information in `entries` (metadata keys and JSON values; other keys are ignored), or `nil` when they
    /// hold no labels; a value that is not the JSON its key needs is an error naming the key.
    static func fromMetadata(_ entries: [(key: String, value: String)]) throws(ONNXImportError) -> ONNXModelInfo? {
        var object: [String: Any] = [:]
        for (key, value) in entries where keys.contains(key) {
            guard value.utf8.count <= ONNXLimits.maximumMetadataBytes else {
                throw ONNXImportError("metadata \(key) is \(value.utf8.count) bytes, more than \(ONNXLimits.maximumMetadataBytes)")
            }
            guard let parsed = try? JSONSerialization.jsonObject(with: Data(value.utf8), options: [.fragmentsAllowed]) else {
                throw ONNXImportError("metadata \(key) is not JSON: \(value.prefix(80))")
            }
            object[key] = parsed
        }
        guard object["labels"] != nil else { return nil }
        return try decode(object, from: "the model's metadata")
    }

    /// The information in a sidecar's bytes.
    static func fromSidecar(_ bytes: Data, path: String) throws(ONNXImportError) -> ONNXModelInfo {
        guard bytes.count <= ONNXLimits.maximumMetadataBytes else {
            throw ONNXImportError("\(path) is \(bytes.count) bytes, more than a sidecar may be (\(ONNXLimits.maximumMetadataBytes))")
        }
        guard let object = try? JSONSerialization.jsonObject(with: bytes) as? [String: Any] else {
            throw ONNXImportError("\(path) is not a JSON object (see ONNXModelInfo: {\"labels\": [...], \"task\": \"shape\"})")
        }
        return try decode(object, from: path)
    }

    private static func decode(_ object: [String: Any], from source: String) throws(ONNXImportError) -> ONNXModelInfo {
        do {
            let data = try JSONSerialization.data(withJSONObject: object)
            return try JSONDecoder().decode(ONNXModelInfo.self, from: data)
        } catch let DecodingError.keyNotFound(key, _) {
            throw ONNXImportError("\(source) lacks \(key.stringValue)")
        } catch let DecodingError.typeMismatch(_, context), let DecodingError.valueNotFound(_, context),
            let DecodingError.dataCorrupted(context)
        {
            let path = context.codingPath.map(\.stringValue).joined(separator: ".")
            throw ONNXImportError("\(source): \(path.isEmpty ? "" : path + ": ")\(context.debugDescription)")
        } catch {
            throw ONNXImportError("\(source): \(error)")
        }
    }
}

/// The motion model's default preprocessing (what `classify train motion` uses without options).
enum MotionModelDefaults {
    static var preprocessing: [String: JSONValue] { MotionWindowing().parameters }
}
