// roofplan/roofplan.hpp — the umbrella header: units, layers, models and the zoo, devices, the engine, systems.
#pragma once

#include <roofplan/layers/layer.hpp>
#include <roofplan/model/model.hpp>
#include <roofplan/device/catalog.hpp>
#include <roofplan/device/device.hpp>
#include <roofplan/engine/predict.hpp>
#include <roofplan/calibration/profile.hpp>
#include <roofplan/models/zoo.hpp>
#include <roofplan/plan/plan.hpp>
#include <roofplan/plan/scaling.hpp>
#include <roofplan/precision.hpp>
#include <roofplan/shape.hpp>
#include <roofplan/system/collective.hpp>
#include <roofplan/system/parallel.hpp>
#include <roofplan/system/systems.hpp>
#include <roofplan/system/topology.hpp>
#include <roofplan/units.hpp>
#include <roofplan/version.hpp>
#include <roofplan/work.hpp>
