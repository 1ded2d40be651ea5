import Tensor

// The weights header read from `PlainJSON` with the keys and types the synthesized `Decodable` conformances
// expect. Each reader accepts only what that decoding would accept and give the same value for; it also refuses
// some documents `JSONDecoder` reads (unknown keys, integers written as `1.0`), which then take the
// `JSONDecoder` path.

extension WeightsHeader {
    /// The header decoded from `bytes` without `JSONDecoder`, or `nil` when it is not in the plain form the
    /// encoder writes: the caller then decodes it with `JSONDecoder`, which also reports what is wrong.
    init?(plainJSON bytes: ArraySlice<UInt8>) {
        let keys: Set<String> = [
            "name", "architecture", "labels", "input", "preprocessing", "training", "decision",
            "activationQuantization", "tensors",
        ]
        guard
            let members = PlainJSON.parse(bytes)?.members(
                allowed: keys, required: ["name", "architecture", "labels", "input", "preprocessing", "tensors"]),
            let name = members["name"]?.string,
            let architecture = members["architecture"]?.array(LayerSpec.init(plainJSON:)),
            let labels = members["labels"]?.array(\.string),
            let input = members["input"].flatMap(InputSpec.init(plainJSON:)),
            case .object(let preprocessingList)? = members["preprocessing"],
            let preprocessing = PlainJSON.object(preprocessingList).jsonValue,
            case .object(let preprocessingValues) = preprocessing,
            let training = PlainJSON.optional(members["training"], TrainingMetadata.init(plainJSON:)),
            let decision = PlainJSON.optional(members["decision"], DecisionRule.init(plainJSON:)),
            let activationQuantization = PlainJSON.optional(
                members["activationQuantization"],
                {
                    $0.array(ActivationQuantization.init(plainJSON:))
                }),
            let tensors = members["tensors"]?.array(TensorEntry.init(plainJSON:))
        else { return nil }
        self.init(
            name: name, architecture: architecture, labels: labels, input: input, preprocessing: preprocessingValues,
            training: training, decision: decision, activationQuantization: activationQuantization, tensors: tensors)
    }
}

extension InputSpec {
    init?(plainJSON json: PlainJSON) {
        guard let members = json.members(allowed: ["shape", "description"], required: ["shape", "description"]),
            let shape = members["shape"]?.array(\.int), let description = members["description"]?.string
        else { return nil }
        self.init(shape: shape, description: description)
    }
}

extension TrainingMetadata {
    init?(plainJSON json: PlainJSON) {
        let keys: Set<String> = ["dataset", "datasetChecksum", "seed", "epochs", "validationAccuracy", "run"]
        guard let members = json.members(allowed: keys, required: []),
            let dataset = PlainJSON.optional(members["dataset"], \.string),
            let datasetChecksum = PlainJSON.optional(members["datasetChecksum"], \.string),
            let seed = PlainJSON.optional(members["seed"], \.uint64),
            let epochs = PlainJSON.optional(members["epochs"], \.int),
            let validationAccuracy = PlainJSON.optional(members["validationAccuracy"], \.double),
            let run = PlainJSON.optional(members["run"], \.string)
        else { return nil }
        self.init(
            dataset: dataset, datasetChecksum: datasetChecksum, seed: seed, epochs: epochs,
            validationAccuracy: validationAccuracy, run: run)
    }
}

extension DecisionRule {
    init?(plainJSON json: PlainJSON) {
        guard
            let members = json.members(
                allowed: ["temperature", "rejectLabel", "uncertainBelow"],
                required: ["temperature", "uncertainBelow"]),
            let temperature = members["temperature"]?.double,
            let rejectLabel = PlainJSON.optional(members["rejectLabel"], \.string),
            let uncertainBelow = members["uncertainBelow"]?.double
        else { return nil }
        self.init(temperature: temperature, rejectLabel: rejectLabel, uncertainBelow: uncertainBelow)
    }
}

extension ActivationQuantization {
    init?(plainJSON json: PlainJSON) {
        guard let members = json.members(allowed: ["layer", "scale", "zeroPoint"], required: ["layer", "scale", "zeroPoint"]),
            let layer = members["layer"]?.int, let scale = members["scale"]?.float, let zeroPoint = members["zeroPoint"]?.int
        else { return nil }
        self.init(layer: layer, scale: scale, zeroPoint: zeroPoint)
    }
}

extension TensorEntry {
    init?(plainJSON json: PlainJSON) {
        let keys: Set<String> = ["name", "shape", "format", "offset", "length"]
        guard let members = json.members(allowed: keys, required: keys),
            let name = members["name"]?.string, let shape = members["shape"]?.array(\.int),
            let format = members["format"]?.string.flatMap(StorageFormat.init(rawValue:)),
            let offset = members["offset"]?.int, let length = members["length"]?.int
        else { return nil }
        self.init(name: name, shape: shape, format: format, offset: offset, length: length)
    }
}

extension LayerSpec {
    /// `{"case": {labels…}}`, as the synthesized enum decoding reads it: exactly one case key.
    init?(plainJSON json: PlainJSON) {
        guard case .object(let list) = json, list.count == 1 else { return nil }
        let (kind, body) = (list[0].key, list[0].value)
        func fields(_ labels: Set<String>) -> [String: PlainJSON]? { body.members(allowed: labels, required: labels) }
        func padding(_ json: PlainJSON?) -> Padding? { json?.string.flatMap(Padding.init(rawValue:)) }
        func pooling(_ json: PlainJSON?) -> PoolingKind? { json?.string.flatMap(PoolingKind.init(rawValue:)) }
        switch kind {
        case "dense":
            guard let f = fields(["inFeatures", "outFeatures"]), let i = f["inFeatures"]?.int, let o = f["outFeatures"]?.int
            else { return nil }
            self = .dense(inFeatures: i, outFeatures: o)
        case "conv1D":
            guard let f = fields(["inChannels", "outChannels", "kernelSize", "stride", "padding"]),
                let i = f["inChannels"]?.int, let o = f["outChannels"]?.int, let k = f["kernelSize"]?.int,
                let s = f["stride"]?.int, let p = padding(f["padding"])
            else { return nil }
            self = .conv1D(inChannels: i, outChannels: o, kernelSize: k, stride: s, padding: p)
        case "conv2D":
            guard let f = fields(["inChannels", "outChannels", "kernelHeight", "kernelWidth", "strideHeight", "strideWidth", "padding"]),
                let i = f["inChannels"]?.int, let o = f["outChannels"]?.int, let kh = f["kernelHeight"]?.int,
                let kw = f["kernelWidth"]?.int, let sh = f["strideHeight"]?.int, let sw = f["strideWidth"]?.int,
                let p = padding(f["padding"])
            else { return nil }
            self = .conv2D(inChannels: i, outChannels: o, kernelHeight: kh, kernelWidth: kw, strideHeight: sh, strideWidth: sw, padding: p)
        case "pool1D":
            guard let f = fields(["kind", "size", "stride", "padding"]), let kind = pooling(f["kind"]),
                let size = f["size"]?.int, let s = f["stride"]?.int, let p = padding(f["padding"])
            else { return nil }
            self = .pool1D(kind: kind, size: size, stride: s, padding: p)
        case "pool2D":
            guard let f = fields(["kind", "height", "width", "strideHeight", "strideWidth", "padding"]),
                let kind = pooling(f["kind"]), let h = f["height"]?.int, let w = f["width"]?.int,
                let sh = f["strideHeight"]?.int, let sw = f["strideWidth"]?.int, let p = padding(f["padding"])
            else { return nil }
            self = .pool2D(kind: kind, height: h, width: w, strideHeight: sh, strideWidth: sw, padding: p)
        case "globalAveragePool":
            guard fields([]) != nil else { return nil }
            self = .globalAveragePool
        case "batchNorm":
            guard let f = fields(["channels", "epsilon"]), let c = f["channels"]?.int, let e = f["epsilon"]?.float else { return nil }
            self = .batchNorm(channels: c, epsilon: e)
        case "flatten":
            guard fields([]) != nil else { return nil }
            self = .flatten
        case "activation":
            guard let f = fields(["function"]), let function = f["function"].flatMap(Activation.Function.init(plainJSON:)) else { return nil }
            self = .activation(function: function)
        default:
            return nil
        }
    }
}

extension Activation.Function {
    init?(plainJSON json: PlainJSON) {
        guard case .object(let list) = json, list.count == 1 else { return nil }
        let (kind, body) = (list[0].key, list[0].value)
        let empty = body.members(allowed: [], required: []) != nil
        switch kind {
        case "relu" where empty: self = .relu
        case "sigmoid" where empty: self = .sigmoid
        case "tanh" where empty: self = .tanh
        case "softmax" where empty: self = .softmax
        case "logSoftmax" where empty: self = .logSoftmax
        case "leakyRelu":
            guard let alpha = body.members(allowed: ["alpha"], required: ["alpha"])?["alpha"]?.float else { return nil }
            self = .leakyRelu(alpha: alpha)
        default: return nil
        }
    }
}
