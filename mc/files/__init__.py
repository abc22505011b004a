"""Files in and out: scenario, plan and request-log inputs (and a user's own
eviction rule) with one-line errors,
the registries they may name, what each of their fields means (``FIELD_DOCS``),
and sealed, atomic outputs."""

from .fielddocs import FIELDS as FIELD_DOCS
from .fielddocs import defaults as field_defaults
from .fielddocs import describe as field_doc
from .inputs import (load_procurement, load_scenario, procurement, procurement_from_data, read_one_table,
                     read_toml, read_trace_csv, scenario, scenario_from_data, to_toml)
from .outputs import (OUTPUT_FORMATS, WRITTEN, atomic_write, check_output, check_output_folder, digest, read_parquet,
                      write_parquet, write_table, write_text)
from .paths import MAX_INPUT_BYTES, input_file
from .requestlog import LOG_FORMATS, read_request_log
from .rules import is_rule_path, load_policies, load_rule

__all__ = ["read_toml", "to_toml", "read_one_table", "read_trace_csv", "scenario_from_data", "procurement_from_data",
           "load_scenario", "load_procurement", "scenario", "procurement", "check_output", "check_output_folder",
           "atomic_write", "digest", "read_parquet", "write_parquet", "write_table", "write_text", "OUTPUT_FORMATS", "WRITTEN",
           "MAX_INPUT_BYTES", "input_file", "read_request_log", "LOG_FORMATS", "FIELD_DOCS", "field_doc",
           "field_defaults", "is_rule_path", "load_policies", "load_rule"]
