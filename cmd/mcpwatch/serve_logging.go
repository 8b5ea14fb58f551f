package main

import (
	"fmt"
	"io"

	zaplogfmt "github.com/jsternberg/zap-logfmt"
	"github.com/prometheus/exporter-toolkit/web"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.yaml.in/yaml/v3"

	"github.com/mcpwatch/mcpwatch/internal/util/readfile"
)

// logFormats are serve's log formats (--log.format), by name: a new one
// is one entry.
var logFormats = map[string]func(zapcore.EncoderConfig) zapcore.Encoder{
	"logfmt": zaplogfmt.NewEncoder,
	"json":   zapcore.NewJSONEncoder,
}

// logFormatNames are the log formats, the default (logfmt) first.
func logFormatNames() []string { return namesFirst(logFormats, "logfmt") }

// newLogger builds the daemon's logger as Prometheus components log: to
// stderr, logfmt or JSON, with --log.level.
func newLogger(w io.Writer, level, format string) (*zap.Logger, error) {
	var lvl zapcore.Level
	switch level {
	case "debug", "info", "warn", "error":
		if err := lvl.Set(level); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("--log.level %q: use debug, info, warn or error", level)
	}
	encoderConfig := zapcore.EncoderConfig{
		TimeKey:        "ts",
		LevelKey:       "level",
		NameKey:        "logger",
		CallerKey:      "caller",
		MessageKey:     "msg",
		LineEnding:     zapcore.DefaultLineEnding,
		EncodeTime:     zapcore.RFC3339NanoTimeEncoder,
		EncodeLevel:    zapcore.LowercaseLevelEncoder,
		EncodeDuration: zapcore.StringDurationEncoder,
		EncodeCaller:   zapcore.ShortCallerEncoder,
		EncodeName:     zapcore.FullNameEncoder,
	}
	encoder, ok := logFormats[format]
	if !ok {
		return nil, fmt.Errorf("--log.format %q: use %s", format, orList(logFormatNames()))
	}
	core := zapcore.NewCore(encoder(encoderConfig), zapcore.Lock(zapcore.AddSync(w)), lvl)
	return zap.New(core, zap.AddCaller()), nil
}

// usesTLS reports whether a web configuration file turns TLS on, for the
// scheme of the addresses printed at start. A file that does not parse was
// refused earlier by web.Validate.
func usesTLS(webConfigFile string) bool {
	if webConfigFile == "" {
		return false
	}
	data, err := readfile.Read(webConfigFile, 1<<20)
	if err != nil {
		return false
	}
	var cfg web.Config // the toolkit's own reading of the file
	if yaml.Unmarshal(data, &cfg) != nil {
		return false
	}
	return cfg.TLSConfig.IsEnabled()
}
