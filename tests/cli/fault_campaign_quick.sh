#!/usr/bin/env bash
# The short fault campaign (scripts/fault_campaign.sh --quick) for CTest. Usage: fault_campaign_quick.sh PATH/TO/ingot
ingot="$(realpath -- "$1")" && cd "$(dirname "$0")/../.." && exec bash scripts/fault_campaign.sh --quick "$ingot"
