import Tensor

// The weights header read from `HeaderJSON`: the one reader of the format `Weights/FORMAT.md` defines. Each type
// reads its fields, with the keys and value forms the encoder (the `Codable` conformances, through `JSONEncoder`)
// writes, and gives the value `JSONDecoder` would (the tests hold it to that twin); keys it does not know are
// ignored, as the format promises. It is stricter than `JSONDecoder` where the format gains nothing from leniency:
// a missing required key, a value of the wrong type, an integer written with a fraction or exponent, a number its
// type cannot hold, a layer or activation kind it does not know — each throws `HeaderJSONError.field` with the
// field's path.

extension WeightsHeader {
    /// Reads a header from its JSON bytes: a syntax error says where in the bytes, a field error names the field.
    init(jsonBytes bytes: ArraySlice<UInt8>) throws(HeaderJSONError) {
        let members = try HeaderJSON.parse(bytes).members()
        self.init(
            name: try members.string("name"),
            architecture: try members.required("architecture") { json throws(HeaderJSONError) in try json.array(LayerSpec.init(headerJSON:)) },
            labels: try members.strings("labels"),
            input: try members.required("input", InputSpec.init(headerJSON:)),
            preprocessing: try members.required("preprocessing") { json throws(HeaderJSONError) in
                guard case .object = json, case .object(let values) = try json.jsonValue() else { throw json.mismatch("an object") }
                return values
            },
            training: try members.optional("training", TrainingMetadata.init(headerJSON:)),
            decision: try members.optional("decision", DecisionRule.init(headerJSON:)),
            activationQuantization: try members.optional("activationQuantization") { json throws(HeaderJSONError) in
                try json.array(ActivationQuantization.init(headerJSON:))
            },
            tensors: try members.required("tensors") { json throws(HeaderJSONError) in try json.array(TensorEntry.init(headerJSON:)) })
    }
}

extension InputSpec {
    /// `{"shape": [28, 28, 1], "description": "…"}`.
    init(headerJSON json: HeaderJSON) throws(HeaderJSONError) {
        let members = try json.members()
        self.init(
            shape: try members.ints("shape"),
            description: try members.string("description"))
    }
}

extension TrainingMetadata {
    /// `{"dataset": "…", "seed": 7, "epochs": 30, …}`: every field optional (missing or `null`).
    init(headerJSON json: HeaderJSON) throws(HeaderJSONError) {
        let members = try json.members()
        let epochsTrained = try members.optionalInt("epochsTrained"), epochs = try members.optionalInt("epochs")
        if let epochsTrained, epochsTrained < max(1, epochs ?? 1) {
            throw HeaderJSONError.field(
                path: "", problem: "expected at least \(max(1, epochs ?? 1)) (a run trains its best epoch and more), found \(epochsTrained)"
            ).inside(key: "epochsTrained")
        }
        self.init(
            dataset: try members.optionalString("dataset"), datasetChecksum: try members.optionalString("datasetChecksum"),
            seed: try members.optionalUInt64("seed"), epochs: epochs,
            validationAccuracy: try members.optionalDouble("validationAccuracy"), run: try members.optionalString("run"),
            epochsTrained: epochsTrained)
    }
}

extension DecisionRule {
    /// `{"temperature": 1.3, "rejectLabel": "other", "uncertainBelow": 0.7, "shapeOdds": {…}}`; `rejectLabel` and
    /// `shapeOdds` optional.
    init(headerJSON json: HeaderJSON) throws(HeaderJSONError) {
        let members = try json.members()
        self.init(
            temperature: try members.double("temperature"),
            rejectLabel: try members.optionalString("rejectLabel"),
            uncertainBelow: try members.double("uncertainBelow"),
            shapeOdds: try members.optional("shapeOdds", ShapeOdds.init(headerJSON:)))
    }
}

extension DecisionRule.ShapeOdds {
    /// `{"network": 1.1, "outline": 2.3, "bias": 7.4, "from": 0.01}`.
    init(headerJSON json: HeaderJSON) throws(HeaderJSONError) {
        let members = try json.members()
        self.init(
            network: try members.double("network"), outline: try members.double("outline"), bias: try members.double("bias"),
            from: try members.double("from"))
    }
}

extension ActivationQuantization {
    /// `{"layer": 3, "scale": 0.0123, "zeroPoint": 0}`.
    init(headerJSON json: HeaderJSON) throws(HeaderJSONError) {
        let members = try json.members()
        self.init(layer: try members.int("layer"), scale: try members.float("scale"), zeroPoint: try members.int("zeroPoint"))
    }
}

extension TensorEntry {
    /// `{"name": "0.weight", "shape": [16, 3, 3, 1], "format": "int8", "offset": 0, "length": 208}`.
    init(headerJSON json: HeaderJSON) throws(HeaderJSONError) {
        let members = try json.members()
        self.init(
            name: try members.string("name"),
            shape: try members.ints("shape"),
            format: try members.choice("format", StorageFormat.self), offset: try members.int("offset"),
            length: try members.int("length"))
    }
}

extension LayerSpec {
    /// The layer kinds, as the keys of `{"kind": {fields…}}`, for error messages.
    private static let kinds = [
        "dense", "conv1D", "conv2D", "pool1D", "pool2D", "globalAveragePool", "batchNorm", "flatten", "activation", "transpose", "reshape", "pad",
        "constantOperation", "reduce",
    ]

    /// `{"kind": {fields…}}`, as the synthesized enum coding writes it: one key, the layer kind, whose object
    /// holds exactly that kind's fields.
    init(headerJSON json: HeaderJSON) throws(HeaderJSONError) {
        guard case .object(let list) = json, list.count == 1 else { throw json.mismatch("an object with one key, the layer kind") }
        let (kind, body) = (list[0].key, list[0].value)
        let layer: LayerSpec?
        do throws(HeaderJSONError) {
            layer = try Self.layer(kind, body)
        } catch {
            throw error.inside(key: kind)
        }
        guard let layer else {
            throw .field(
                path: "", problem: "unknown layer kind \(HeaderJSONError.quoted(kind)) (the kinds are \(Self.kinds.joined(separator: ", ")))")
        }
        self = layer
    }

    /// The layer of kind `kind` from its fields, or `nil` for a kind this build does not know.
    private static func layer(_ kind: String, _ body: HeaderJSON) throws(HeaderJSONError) -> LayerSpec? {
        switch kind {
        case "dense":
            let f = try body.members()
            return .dense(inFeatures: try f.int("inFeatures"), outFeatures: try f.int("outFeatures"))
        case "conv1D":
            let f = try body.members()
            return .conv1D(
                inChannels: try f.int("inChannels"), outChannels: try f.int("outChannels"), kernelSize: try f.int("kernelSize"),
                stride: try f.int("stride"), padding: try f.choice("padding", Padding.self))
        case "conv2D":
            let f = try body.members()
            return .conv2D(
                inChannels: try f.int("inChannels"), outChannels: try f.int("outChannels"), kernelHeight: try f.int("kernelHeight"),
                kernelWidth: try f.int("kernelWidth"), strideHeight: try f.int("strideHeight"), strideWidth: try f.int("strideWidth"),
                padding: try f.choice("padding", Padding.self))
        case "pool1D":
            let f = try body.members()
            return .pool1D(
                kind: try f.choice("kind", PoolingKind.self), size: try f.int("size"), stride: try f.int("stride"),
                padding: try f.choice("padding", Padding.self))
        case "pool2D":
            let f = try body.members()
            return .pool2D(
                kind: try f.choice("kind", PoolingKind.self), height: try f.int("height"), width: try f.int("width"),
                strideHeight: try f.int("strideHeight"), strideWidth: try f.int("strideWidth"), padding: try f.choice("padding", Padding.self))
        case "globalAveragePool":
            _ = try body.members()
            return .globalAveragePool
        case "batchNorm":
            let f = try body.members()
            return .batchNorm(channels: try f.int("channels"), epsilon: try f.float("epsilon"))
        case "flatten":
            _ = try body.members()
            return .flatten
        case "activation":
            let f = try body.members()
            return .activation(function: try f.required("function", Activation.Function.init(headerJSON:)))
        case "transpose":
            return .transpose(permutation: try body.members().ints("permutation"))
        case "reshape":
            return .reshape(shape: try body.members().ints("shape"))
        case "pad":
            let f = try body.members()
            return .pad(
                before: try f.ints("before"), after: try f.ints("after"), mode: try f.choice("mode", PaddingMode.self), value: try f.float("value"))
        case "constantOperation":
            let f = try body.members()
            return .constantOperation(operation: try f.choice("operation", ConstantOperation.Operation.self), shape: try f.ints("shape"))
        case "reduce":
            let f = try body.members()
            return .reduce(kind: try f.choice("kind", Reduce.Kind.self), axes: try f.ints("axes"))
        default:
            return nil
        }
    }
}

extension Activation.Function {
    /// The functions, as the keys of `{"function": {fields…}}`, for error messages.
    private static let kinds = ["relu", "leakyRelu", "sigmoid", "tanh", "softmax", "logSoftmax", "elu", "selu", "softplus", "softsign"]

    /// `{"relu": {}}`, `{"leakyRelu": {"alpha": 0.05}}`: one key, the function, whose object holds its fields.
    init(headerJSON json: HeaderJSON) throws(HeaderJSONError) {
        guard case .object(let list) = json, list.count == 1 else { throw json.mismatch("an object with one key, the function") }
        let (kind, body) = (list[0].key, list[0].value)
        let function: Activation.Function?
        do throws(HeaderJSONError) {
            function = try Self.function(kind, body)
        } catch {
            throw error.inside(key: kind)
        }
        guard let function else {
            throw .field(
                path: "", problem: "unknown activation \(HeaderJSONError.quoted(kind)) (the functions are \(Self.kinds.joined(separator: ", ")))")
        }
        self = function
    }

    /// The function named `kind` from its fields, or `nil` for a name this build does not know.
    private static func function(_ kind: String, _ body: HeaderJSON) throws(HeaderJSONError) -> Activation.Function? {
        let withoutFields: Activation.Function? =
            switch kind {
            case "relu": .relu
            case "sigmoid": .sigmoid
            case "tanh": .tanh
            case "softmax": .softmax
            case "logSoftmax": .logSoftmax
            case "softplus": .softplus
            case "softsign": .softsign
            default: nil
            }
        if let withoutFields {
            _ = try body.members()
            return withoutFields
        }
        switch kind {
        case "leakyRelu": return .leakyRelu(alpha: try body.members().float("alpha"))
        case "elu": return .elu(alpha: try body.members().float("alpha"))
        case "selu":
            let f = try body.members()
            return .selu(alpha: try f.float("alpha"), gamma: try f.float("gamma"))
        default: return nil
        }
    }
}
