// roofplan/roofplan.hpp — the umbrella header: units, layer descriptors, models and the zoo.
#pragma once

#include <roofplan/layers/layer.hpp>
#include <roofplan/model/model.hpp>
#include <roofplan/device/catalog.hpp>
#include <roofplan/device/device.hpp>
#include <roofplan/engine/predict.hpp>
#include <roofplan/engine/profile.hpp>
#include <roofplan/models/zoo.hpp>
#include <roofplan/precision.hpp>
#include <roofplan/shape.hpp>
#include <roofplan/units.hpp>
#include <roofplan/version.hpp>
#include <roofplan/work.hpp>
