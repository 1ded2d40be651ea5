#if ONNX
import DataFiles
import Foundation
import Models
import Tensor
import WeightsFormat

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
    public var task: RecognitionTask?
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
        name: String? = nil, labels: [String], task: RecognitionTask? = nil, preprocessing: [String: JSONValue]? = nil,
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
        case .shape?: return ShapeRasterizer().parameters
        case .motion?: return MotionModelDefaults.preprocessing
        case nil: return nil
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

    /// The information of a model: its metadata's fields (`entries`: keys and JSON values; other keys are
    /// ignored), with those of the sidecar's JSON object replacing them (a sidecar's `task` or `preprocessing`
    /// replaces both of the metadata's). Missing labels, or no way to know the preprocessing, is an error that says
    /// what to write (a sidecar for `exampleTask`, the task the model's input suggests); `modelPath` names the model.
    static func merged(
        metadata entries: [(key: String, value: String)], sidecar: (data: Data, path: String)?, modelPath: String,
        exampleTask: RecognitionTask = .motion
    ) throws(ONNXImportError) -> ONNXModelInfo {
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
        var source = "the model's metadata"
        if let sidecar {
            let overlay: [String: Any]
            do {
                guard let parsed = try JSONSerialization.jsonObject(with: sidecar.data) as? [String: Any] else {
                    throw ONNXImportError("\(sidecar.path) is not a JSON object (docs/onnx.md: {\"labels\": [...], \"task\": \"shape\"})")
                }
                overlay = parsed
            } catch let error as ONNXImportError {
                throw error
            } catch {
                let detail = (error as NSError).userInfo["NSDebugDescription"].map { "\($0)" } ?? "\(error)"
                throw ONNXImportError("\(sidecar.path) is not JSON: \(detail)")
            }
            if overlay["task"] != nil || overlay["preprocessing"] != nil {
                object["task"] = nil
                object["preprocessing"] = nil
            }
            object.merge(overlay.filter { keys.contains($0.key) }) { _, new in new }
            source = sidecar.path
        }
        // Neither labels nor a way to preprocess: a raw model (`classify run`, `inspect`), which no recognizer takes.
        if object["labels"] == nil && object["task"] == nil && object["preprocessing"] == nil {
            object["labels"] = [String]()
            var info = try decode(object, from: source)
            info.decision = nil
            return info
        }
        guard object["labels"] != nil else {
            throw ONNXImportError(
                "no labels: the model's metadata has none and there is no sidecar \(modelPath).json "
                    + {
                        switch exampleTask {
                        case .shape:
                            "(a JSON object such as {\"labels\": [\"circle\", \"triangle\", \"square\", \"star\", \"other\"], \"task\": \"shape\"})"
                        case .motion: "(a JSON object such as {\"labels\": [\"walking\", \"running\", \"still\"], \"task\": \"motion\"})"
                        }
                    }())
        }
        // A decision may give only some of its fields; the others are the default rule's.
        if var decision = object["decision"] as? [String: Any] {
            decision["temperature"] = decision["temperature"] ?? 1
            decision["uncertainBelow"] = decision["uncertainBelow"] ?? DecisionRule.defaultUncertainBelow
            if decision["rejectLabel"] == nil, (object["labels"] as? [Any])?.contains(where: { $0 as? String == DecisionRule.otherLabel }) == true {
                decision["rejectLabel"] = DecisionRule.otherLabel
            }
            object["decision"] = decision
        }
        let info = try decode(object, from: source)
        guard !info.labels.isEmpty else { throw ONNXImportError("\(source): labels is empty; name one label per output") }
        guard info.preprocessing != nil || info.task != nil else {
            throw ONNXImportError(
                "no preprocessing: give \"task\": \"shape\" or \"motion\", or \"preprocessing\", in the metadata or the sidecar \(modelPath).json")
        }
        return info
    }

    /// The preprocessing, checked against the model's input: it must make inputs of `inputShape`, read by its type
    /// among the built-in tasks' and `others` (an app's own).
    func checkedPreprocessing(for inputShape: [Int], others: [any ModelPreprocessing.Type]) throws(ONNXImportError) -> [String: JSONValue] {
        guard let preprocessing = resolvedPreprocessing() else { throw ONNXImportError("no preprocessing") }
        guard let made = RecognitionTask.inputShape(of: preprocessing, among: others) else {
            let known = RecognitionTask.preprocessings(among: others).map { $0.kind }
            throw ONNXImportError(
                "preprocessing kind \(preprocessing["kind"].map { "\($0)" } ?? "(none)") is not "
                    + known.dropLast().joined(separator: ", ") + (known.count > 1 ? " or " : "") + (known.last ?? ""))
        }
        let makes: [Int]
        switch made {
        case .success(let shape): makes = shape
        case .failure(let error): throw ONNXImportError("preprocessing: \(error.message)")
        }
        guard makes == inputShape else {
            throw ONNXImportError(
                "the preprocessing (\(task?.rawValue ?? "given")) makes inputs of shape \(makes), and the model takes \(inputShape)")
        }
        return preprocessing
    }

    private static func decode(_ object: [String: Any], from source: String) throws(ONNXImportError) -> ONNXModelInfo {
        // A task this build does not know: refused, as the user wrote it, when it is what says the preprocessing;
        // beside a `preprocessing` that says it in full, passed over as before.
        var object = object
        if let name = object["task"] as? String, RecognitionTask(name: name) == nil {
            guard object["preprocessing"] != nil else {
                throw ONNXImportError("\(source): task '\(name)' is not \(RecognitionTask.namesText)")
            }
            object["task"] = nil
        }
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

extension ONNXModelInfo {
    /// The sidecar the import reads beside the model at `modelPath`: `MODEL.onnx.json`.
    public static func sidecarPath(ofModel modelPath: String) -> String { modelPath + ".json" }
}
#endif
